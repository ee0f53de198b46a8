#include "swarmt/data/synthetic/facts_in_noise.h"

#include <gtest/gtest.h>

#include <map>
#include <regex>

#include "swarmt/core/error.h"
#include "swarmt/data/source_factory.h"
#include "test_util.h"

namespace swarmt::data {
namespace {

struct FactsFixture {
  TextTokenizer tok = load_text_tokenizer("byte");
  QaLengthCounter counter = make_qa_length_counter(tok.tokenizer, tok.ids);
  std::shared_ptr<const ProseCorpus> builtin{&builtin_prose_corpus(), [](const ProseCorpus*) {}};

  LongContextExample make(const std::string& variant, uint64_t seed, int64_t target,
                          std::optional<double> depth = std::nullopt) const {
    FactsInNoiseOptions o;
    o.variant = variant;
    FactsInNoiseTask task(builtin, o, counter);
    ExampleRequest r;
    r.target_tokens = target;
    r.seed = seed;
    r.depth = depth;
    return task.generate(r);
  }
};

// Replays the story of a context: where each person is, and who holds which object.
struct Story {
  std::map<std::string, std::string> location_of_person;
  std::map<std::string, std::string> holder_of_object;
  int moves = 0;
};

Story replay(const std::string& context) {
  static const std::regex kFact(
      "([A-Z][a-z]+) (went to|moved to|travelled to|journeyed to|went back to|picked up|grabbed|got|took) the ([a-z]+)\\.");
  Story story;
  for (auto it = std::sregex_iterator(context.begin(), context.end(), kFact); it != std::sregex_iterator(); ++it) {
    const std::string person = (*it)[1], verb = (*it)[2], thing = (*it)[3];
    if (verb == "picked up" || verb == "grabbed" || verb == "got" || verb == "took") {
      story.holder_of_object[thing] = person;
    } else {
      story.location_of_person[person] = thing;
      ++story.moves;
    }
  }
  return story;
}

TEST(FactsInNoise, qa1_answer_is_the_last_place_of_the_person_asked) {
  FactsFixture f;
  std::smatch m;
  for (uint64_t seed = 0; seed < 10; ++seed) {
    auto e = f.make("qa1", seed, 2048);
    ASSERT_TRUE(std::regex_match(e.question, m, std::regex("Question: Where is ([A-Z][a-z]+)\\?\nAnswer:"))) << e.question;
    Story story = replay(e.context);
    EXPECT_GE(story.moves, 3);
    EXPECT_EQ(story.location_of_person.at(m[1]), e.answer);
    EXPECT_EQ(count_word_occurrences(e.context, e.answer), 1);
  }
}

TEST(FactsInNoise, qa2_answer_needs_the_pickup_and_the_holders_last_move) {
  FactsFixture f;
  std::smatch m;
  for (uint64_t seed = 0; seed < 10; ++seed) {
    auto e = f.make("qa2", seed, 2048);
    ASSERT_TRUE(std::regex_match(e.question, m, std::regex("Question: Where is the ([a-z]+)\\?\nAnswer:"))) << e.question;
    Story story = replay(e.context);
    const std::string holder = story.holder_of_object.at(m[1]);
    EXPECT_EQ(story.location_of_person.at(holder), e.answer);
    EXPECT_EQ(count_word_occurrences(e.context, e.answer), 1);
  }
}

TEST(FactsInNoise, supporting_fact_sits_at_the_requested_depth) {
  FactsFixture f;
  for (double depth : {0.0, 30.0, 60.0, 100.0}) {
    for (const char* variant : {"qa1", "qa2"}) {
      auto e = f.make(variant, 5, 8192, depth);
      EXPECT_NEAR(e.depth, depth, 4.0) << variant;
      const size_t at = e.context.find(" the " + e.answer + ".");
      ASSERT_NE(at, std::string::npos);
      EXPECT_NEAR(100.0 * static_cast<double>(at) / static_cast<double>(e.context.size()), e.depth, 2.0);
    }
  }
}

TEST(FactsInNoise, same_seed_same_example_and_length_near_target) {
  FactsFixture f;
  auto a = f.make("mixed", 11, 8192), b = f.make("mixed", 11, 8192);
  EXPECT_EQ(a.context, b.context);
  EXPECT_EQ(a.answer, b.answer);
  EXPECT_LE(a.length_tokens, 8192);
  EXPECT_GE(a.length_tokens, 8192 - 24);
}

TEST(FactsInNoise, unknown_variant_is_rejected) {
  FactsFixture f;
  FactsInNoiseOptions o;
  o.variant = "qa3";
  try {
    FactsInNoiseTask task(f.builtin, o, f.counter);
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "facts_in_noise: variant must be qa1, qa2 or mixed (got 'qa3')");
  }
}

}  // namespace
}  // namespace swarmt::data
