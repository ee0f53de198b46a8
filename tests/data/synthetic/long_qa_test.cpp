#include "swarmt/data/synthetic/long_qa.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <regex>
#include <set>

#include "swarmt/core/error.h"
#include "swarmt/data/source_factory.h"
#include "swarmt/data/synthetic/essay_text.h"
#include "test_util.h"

namespace swarmt::data {
namespace {

struct LongQaFixture {
  TextTokenizer tok = load_text_tokenizer("byte");
  QaLengthCounter counter = make_qa_length_counter(tok.tokenizer, tok.ids);
  std::shared_ptr<const ProseCorpus> builtin{&builtin_prose_corpus(), [](const ProseCorpus*) {}};

  LongContextExample make(uint64_t seed, int64_t target, std::optional<double> depth = std::nullopt,
                          int64_t distractors = 4, std::vector<std::string> templates = {}, int64_t rewrites = 0) const {
    LongQaOptions o;
    o.distractors = distractors;
    o.templates = std::move(templates);
    o.rewrites = rewrites;
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
    // The templates whose facts all hold a digit (a year or a number); `code` is tested below.
    auto e = f.make(seed, 3000, std::nullopt, /*distractors=*/4, {"budget", "staff", "director", "headquarters", "founded"});
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

// The code-word statements of a context, in text order: (entity, value, is a rewrite).
struct CodeStatement {
  std::string entity, value;
  bool rewrite;
};
std::vector<CodeStatement> code_statements(const std::string& context) {
  std::vector<CodeStatement> out;
  const std::regex statement("The code word of the ([A-Z][a-z]+ [A-Z][a-z]+) (is|was changed to) ([a-z]+)\\.");
  for (auto it = std::sregex_iterator(context.begin(), context.end(), statement); it != std::sregex_iterator(); ++it)
    out.push_back({(*it)[1], (*it)[3], (*it)[2] != "is"});
  return out;
}

std::string asked_entity(const LongContextExample& e) {
  std::smatch m;
  EXPECT_TRUE(std::regex_search(e.question, m, std::regex("the ([A-Z][a-z]+ [A-Z][a-z]+)"))) << e.question;
  return m.size() > 1 ? std::string(m[1]) : std::string();
}

TEST(LongQa, code_template_keys_are_unique_and_every_distractor_is_stated) {
  LongQaFixture f;
  for (uint64_t seed = 0; seed < 12; ++seed) {
    auto e = f.make(seed, 1024, std::nullopt, /*distractors=*/4, {"code"});
    auto statements = code_statements(e.context);
    ASSERT_EQ(statements.size(), 5u) << e.context;
    std::set<std::string> keys, values;
    for (const auto& s : statements) {
      EXPECT_FALSE(s.rewrite);
      keys.insert(s.entity);
      values.insert(s.value);
    }
    EXPECT_EQ(keys.size(), 5u) << "every fact has its own key";
    EXPECT_EQ(values.size(), 5u);
    EXPECT_EQ(e.question, "Question: What is the code word of the " + asked_entity(e) + "?\nAnswer:");
    EXPECT_TRUE(keys.count(asked_entity(e)));
    EXPECT_EQ(count_occurrences(e.context, e.answer), 1);
  }
}

TEST(LongQa, with_rewrites_the_answer_is_the_latest_value_of_the_asked_key) {
  LongQaFixture f;
  for (int64_t rewrites : {1, 3}) {
    for (uint64_t seed = 0; seed < 10; ++seed) {
      auto e = f.make(seed, 2048, std::nullopt, /*distractors=*/4, {"code"}, rewrites);
      const std::string asked = asked_entity(e);
      EXPECT_NE(e.question.find(" now?"), std::string::npos) << e.question;
      std::vector<CodeStatement> of_asked;
      std::map<std::string, int> per_key;
      std::set<std::string> values;
      for (const auto& s : code_statements(e.context)) {
        ++per_key[s.entity];
        values.insert(s.value);
        if (s.entity == asked) of_asked.push_back(s);
      }
      // The asked key: stated rewrites + 1 times, first plainly, then rewritten; the answer is the last.
      ASSERT_EQ(static_cast<int64_t>(of_asked.size()), rewrites + 1) << e.context;
      EXPECT_FALSE(of_asked.front().rewrite);
      for (size_t i = 1; i < of_asked.size(); ++i) EXPECT_TRUE(of_asked[i].rewrite);
      EXPECT_EQ(of_asked.back().value, e.answer);
      // Every value is distinct, so an earlier value of the key is never the answer.
      size_t statements = 0;
      for (const auto& [key, n] : per_key) {
        statements += static_cast<size_t>(n);
        EXPECT_GE(n, 1);
        EXPECT_LE(n, rewrites + 1) << key;
      }
      EXPECT_EQ(values.size(), statements);
      EXPECT_EQ(per_key.size(), 5u);
      EXPECT_EQ(count_occurrences(e.context, e.answer), 1);
    }
  }
}

TEST(LongQa, rewritten_answer_is_placed_at_the_requested_depth_after_its_earlier_values) {
  LongQaFixture f;
  for (double depth : {20.0, 80.0}) {
    auto e = f.make(7, 2048, depth, /*distractors=*/2, {"code"}, /*rewrites=*/2);
    EXPECT_NEAR(e.depth, depth, 8.0);
    const size_t at = e.context.find(" " + e.answer + ".");
    ASSERT_NE(at, std::string::npos);
    for (const auto& s : code_statements(e.context))
      if (s.entity == asked_entity(e) && s.value != e.answer) {
        EXPECT_LT(e.context.find(s.value), at);
      }
  }
}

TEST(LongQa, unknown_templates_and_rewrites_of_a_fixed_fact_are_rejected_naming_them) {
  LongQaFixture f;
  auto message = [&](LongQaOptions o) -> std::string {
    try {
      LongQaTask task(f.builtin, o, f.counter);
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::BadInput);
      return e.what();
    }
    return "no error";
  };
  LongQaOptions unknown;
  unknown.templates = {"code", "poem"};
  EXPECT_NE(message(unknown).find("'poem' is not a template"), std::string::npos) << message(unknown);
  LongQaOptions fixed;
  fixed.templates = {"founded"};
  fixed.rewrites = 1;
  EXPECT_NE(message(fixed).find("'founded' cannot be rewritten"), std::string::npos) << message(fixed);
  LongQaOptions too_many;
  too_many.templates = {"code"};
  too_many.rewrites = 9;
  EXPECT_NE(message(too_many).find("rewrites must be in [0, 8]"), std::string::npos) << message(too_many);
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
  LongQaOptions too_many;
  too_many.distractors = 100;
  EXPECT_THROW(LongQaTask(f.builtin, too_many, f.counter), Error);
}

}  // namespace
}  // namespace swarmt::data
