#include "swarmt/data/long_qa.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <regex>

#include "swarmt/core/error.h"
#include "swarmt/data/essay_text.h"
#include "swarmt/data/source_factory.h"
#include "test_util.h"

namespace swarmt::data {
namespace {

struct LongQaFixture {
  TextTokenizer tok = load_text_tokenizer("byte");
  QaLengthCounter counter = make_qa_length_counter(tok.tokenizer, tok.ids);
  std::shared_ptr<const ProseCorpus> builtin{&builtin_prose_corpus(), [](const ProseCorpus*) {}};

  LongContextExample make(uint64_t seed, int64_t target, std::optional<double> depth = std::nullopt,
                          int64_t distractors = 4) const {
    LongQaOptions o;
    o.distractors = distractors;
    LongQaTask task(builtin, o, counter);
    ExampleRequest r;
    r.id = "long_qa/in/" + std::to_string(seed);
    r.bucket = "in";
    r.target_tokens = target;
    r.seed = seed;
    r.depth = depth;
    return task.generate(r);
  }
};

// The essay text has no digits, and every fact sentence has one (a year or a number).
std::vector<std::string> sentences_with_digits(const std::string& context) {
  std::vector<std::string> out;
  std::string normalised;
  for (const auto& w : split_words(context)) normalised += (normalised.empty() ? "" : " ") + w;
  for (const auto& paragraph : split_sentences(normalised))
    if (std::any_of(paragraph.begin(), paragraph.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
      out.push_back(paragraph);
  return out;
}

TEST(LongQa, same_seed_gives_the_same_example_and_seeds_differ) {
  LongQaFixture f;
  auto a = f.make(7, 2048), b = f.make(7, 2048), c = f.make(8, 2048);
  EXPECT_EQ(a.context, b.context);
  EXPECT_EQ(a.question, b.question);
  EXPECT_EQ(a.answer, b.answer);
  EXPECT_NE(a.context, c.context);
}

TEST(LongQa, answer_occurs_exactly_once_among_same_template_distractors) {
  LongQaFixture f;
  for (uint64_t seed = 0; seed < 12; ++seed) {
    auto e = f.make(seed, 3000, std::nullopt, /*distractors=*/4);
    EXPECT_EQ(count_occurrences(e.context, e.answer), 1) << e.answer;
    EXPECT_EQ(e.question.rfind("Question: ", 0), 0u);
    EXPECT_EQ(e.question.substr(e.question.size() - 8), "\nAnswer:");
    // The one answer fact and four distractors of the same template are in the context.
    auto facts = sentences_with_digits(e.context);
    EXPECT_EQ(facts.size(), 5u) << e.context.substr(0, 300);
    // The entity the question asks about ("the Harbor Office") is in the answer's fact sentence.
    std::smatch m;
    ASSERT_TRUE(std::regex_search(e.question, m, std::regex("the ([A-Z][a-z]+ [A-Z][a-z]+)"))) << e.question;
    const std::string entity = m[1];
    const std::string answer_fact = *std::find_if(facts.begin(), facts.end(), [&](const std::string& s) {
      return s.find(e.answer) != std::string::npos;
    });
    EXPECT_NE(answer_fact.find(entity), std::string::npos) << entity << " | " << answer_fact;
  }
}

TEST(LongQa, fact_is_placed_at_the_requested_depth) {
  LongQaFixture f;
  for (double depth : {0.0, 25.0, 50.0, 75.0, 100.0}) {
    auto e = f.make(3, 4096, depth);
    EXPECT_NEAR(e.depth, depth, 4.0);
    // depth is where the answer's sentence starts, in percent of the context.
    const size_t at = e.context.find(e.answer);
    ASSERT_NE(at, std::string::npos);
    const double answer_percent = 100.0 * static_cast<double>(at) / static_cast<double>(e.context.size());
    EXPECT_GE(answer_percent, e.depth);
    EXPECT_LT(answer_percent - e.depth, 3.0);
  }
}

TEST(LongQa, length_lands_within_a_few_tokens_of_the_target) {
  LongQaFixture f;
  for (int64_t target : {1024, 2048, 8192}) {
    for (uint64_t seed = 0; seed < 3; ++seed) {
      auto e = f.make(seed, target);
      const auto tokens = tokenize_qa(f.tok.tokenizer, f.tok.ids, qa_prompt(e.context, e.question), e.answer);
      EXPECT_EQ(static_cast<int64_t>(tokens.ids.size()), e.length_tokens);
      EXPECT_LE(e.length_tokens, target);
      EXPECT_GE(e.length_tokens, target - 24) << "one word of slack at most";
    }
  }
}

TEST(LongQa, a_user_corpus_directory_provides_the_passages) {
  testing::TempDir dir;
  std::string text;
  for (int i = 0; i < 50; ++i) text += "Zebras graze quietly near the river. Herons wait by the reeds.\n\n";
  testing::write_file(dir.file("corpus.txt"), text);
  LongQaFixture f;
  auto corpus = std::make_shared<const ProseCorpus>(load_prose_corpus(dir.path()));
  LongQaTask task(corpus, LongQaOptions{}, f.counter);
  ExampleRequest r;
  r.target_tokens = 2048;
  r.seed = 1;
  auto e = task.generate(r);
  EXPECT_NE(e.context.find("Zebras graze quietly"), std::string::npos);
  EXPECT_EQ(count_occurrences(e.context, e.answer), 1);
}

TEST(LongQa, impossible_requests_are_clear_errors) {
  LongQaFixture f;
  try {
    f.make(1, 20);
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput);
    EXPECT_NE(std::string(e.what()).find("too small"), std::string::npos) << e.what();
  }
  EXPECT_THROW(LongQaTask(f.builtin, LongQaOptions{100}, f.counter), Error);
}

}  // namespace
}  // namespace swarmt::data
