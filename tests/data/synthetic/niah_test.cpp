#include "swarmt/data/synthetic/niah.h"

#include <gtest/gtest.h>

#include <regex>
#include <set>

#include "swarmt/core/error.h"
#include "swarmt/data/synthetic/essay_text.h"

// A namespace of its own: unity builds put this file beside other data tests with helpers of the same name.
namespace swarmt::data::niah_tests {
namespace {

const std::string kFiller =
    "The grass is green. The sky is blue. The sun is yellow. Here we go. There and back again.";

int64_t count_words(const std::string& text) { return static_cast<int64_t>(split_words(text).size()); }
int64_t count_bytes(const std::string& text) { return static_cast<int64_t>(text.size()); }

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (true) {
    size_t nl = text.find('\n', start);
    lines.push_back(text.substr(start, nl == std::string::npos ? std::string::npos : nl - start));
    if (nl == std::string::npos) break;
    start = nl + 1;
  }
  return lines;
}

// ---------------------------------------------------------------------------------------------------
// The template, written out by hand from RULER's constants.py + niah.py.

TEST(NiahPrompt, singular_template_matches_ruler_exactly) {
  EXPECT_EQ(format_niah_prompt(niah_variant("niah_single_1"), "CONTEXT", {"brave-lantern"}),
            "A special magic number is hidden within the following text. Make sure to memorize it. I will quiz "
            "you about the number afterwards.\nCONTEXT\nWhat is the special magic number for brave-lantern "
            "mentioned in the provided text? The special magic number for brave-lantern mentioned in the provided "
            "text is");
  EXPECT_EQ(format_niah_prompt(niah_variant("niah_single_3"), "C", {"calm-river"}),
            "A special magic uuid is hidden within the following text. Make sure to memorize it. I will quiz you "
            "about the uuid afterwards.\nC\nWhat is the special magic uuid for calm-river mentioned in the "
            "provided text? The special magic uuid for calm-river mentioned in the provided text is");
}

TEST(NiahPrompt, multivalue_template_stays_plural) {
  EXPECT_EQ(format_niah_prompt(niah_variant("niah_multivalue"), "CONTEXT", {"brave-lantern"}),
            "Some special magic numbers are hidden within the following text. Make sure to memorize it. I will "
            "quiz you about the numbers afterwards.\nCONTEXT\nWhat are all the special magic numbers for "
            "brave-lantern mentioned in the provided text? The special magic numbers for brave-lantern mentioned "
            "in the provided text are");
}

TEST(NiahPrompt, multiquery_joins_keys_as_a_b_and_c) {
  EXPECT_EQ(format_niah_prompt(niah_variant("niah_multiquery"), "X", {"a-b", "c-d", "e-f", "g-h"}),
            "Some special magic numbers are hidden within the following text. Make sure to memorize it. I will "
            "quiz you about the numbers afterwards.\nX\nWhat are all the special magic numbers for a-b, c-d, e-f, "
            "and g-h mentioned in the provided text? The special magic numbers for a-b, c-d, e-f, and g-h "
            "mentioned in the provided text are");
  EXPECT_EQ(join_queries({"a"}), "a");
  EXPECT_EQ(join_queries({"a", "b"}), "a, and b");
  EXPECT_EQ(join_queries({"a", "b", "c"}), "a, b, and c");
}

TEST(NiahPrompt, singular_rewrite_does_not_touch_the_context) {
  std::string p = format_niah_prompt(niah_variant("niah_single_2"), "Some answers are here. {query}", {"k-k"});
  EXPECT_NE(p.find("\nSome answers are here. {query}\n"), std::string::npos) << p;
}

TEST(NiahPrompt, needle_sentence_and_depths_are_rulers) {
  EXPECT_EQ(niah_needle_sentence(NeedleType::Numbers, "calm-river", "1234567"),
            "One of the special magic numbers for calm-river is: 1234567.");
  const auto& d = ruler_depths();
  ASSERT_EQ(d.size(), 40u);
  EXPECT_EQ((std::vector<int>(d.begin(), d.begin() + 6)), (std::vector<int>{0, 3, 5, 8, 10, 13}));
  EXPECT_EQ(d[38], 97);
  EXPECT_EQ(d[39], 100);
}

TEST(NiahPrompt, the_eight_standard_variants_are_presets) {
  EXPECT_EQ(niah_variant_names(),
            (std::vector<std::string>{"niah_single_1", "niah_single_2", "niah_single_3", "niah_multikey_1",
                                      "niah_multikey_2", "niah_multikey_3", "niah_multivalue", "niah_multiquery"}));
  NiahTaskConfig mk3 = niah_variant("niah_multikey_3");
  EXPECT_EQ(mk3.haystack, HaystackType::Needle);
  EXPECT_EQ(mk3.key_type, NeedleType::Uuids);
  EXPECT_EQ(mk3.value_type, NeedleType::Uuids);
  NiahTaskConfig mk1 = niah_variant("niah_multikey_1");
  EXPECT_EQ(mk1.haystack, HaystackType::Essay);
  EXPECT_EQ(mk1.num_needle_k, 4);
  EXPECT_EQ(mk1.tokens_to_generate, 128);
  try {
    niah_variant("niah_single_9");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("niah_multiquery"), std::string::npos) << e.what();
  }
}

// ---------------------------------------------------------------------------------------------------
// Generated prompts, checked against the template written out by hand.

TEST(NiahGenerator, noise_prompt_is_filler_paragraphs_with_the_needle_at_an_index) {
  NiahGenerator gen(niah_variant("niah_single_1"), /*seed=*/42);
  NiahPrompt p = gen.build_prompt(/*haystack_size=*/5, /*sample_seed=*/7);
  ASSERT_EQ(p.answers.size(), 1u);
  std::smatch m;
  std::regex needle_re("One of the special magic numbers for ([a-z]+-[a-z]+) is: ([0-9]{7})\\.");
  ASSERT_TRUE(std::regex_search(p.text, m, needle_re)) << p.text;
  const std::string key = m[1], value = m[2];
  EXPECT_EQ(value, p.answers[0]);
  // The context: 5 filler paragraphs and the needle, one per line, the needle at some index i.
  std::vector<std::string> lines = split_lines(p.text);
  ASSERT_EQ(lines.size(), 8u);  // header, 6 context lines, question
  int needle_line = -1;
  std::string context;
  for (int i = 1; i <= 6; ++i) {
    if (lines[i].rfind("One of", 0) == 0) needle_line = i - 1;
    context += (i > 1 ? "\n" : "") + lines[i];
  }
  ASSERT_GE(needle_line, 0);
  std::string expected_context;
  for (int i = 0; i < 6; ++i)
    expected_context += (i ? "\n" : "") +
                        (i == needle_line ? "One of the special magic numbers for " + key + " is: " + value + "." : kFiller);
  EXPECT_EQ(p.text,
            "A special magic number is hidden within the following text. Make sure to memorize it. I will quiz "
            "you about the number afterwards.\n" +
                expected_context + "\nWhat is the special magic number for " + key +
                " mentioned in the provided text? The special magic number for " + key +
                " mentioned in the provided text is");
  EXPECT_DOUBLE_EQ(p.depth, 100.0 * needle_line / 5.0);
}

TEST(NiahGenerator, essay_needle_goes_between_sentences_joined_with_spaces) {
  auto words = std::make_shared<const std::vector<std::string>>(split_words(
      "First sentence here. Second one is here. Third sentence. Fourth one."));
  NiahGenerator gen(niah_variant("niah_single_2"), 42, words);
  NiahPrompt p = gen.build_prompt(/*haystack_size=*/11, /*sample_seed=*/3, /*depth_percent=*/50.0);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(p.text, m, std::regex("for ([a-z]+-[a-z]+) is: ([0-9]{7})\\.")));
  const std::string key = m[1], value = m[2];
  // 4 sentences, depth 50% -> int(4 * 0.5) = 2 sentences before the needle.
  EXPECT_EQ(p.text,
            "A special magic number is hidden within the following text. Make sure to memorize it. I will quiz "
            "you about the number afterwards.\nFirst sentence here. Second one is here. One of the special magic "
            "numbers for " +
                key + " is: " + value +
                ". Third sentence. Fourth one.\nWhat is the special magic number for " + key +
                " mentioned in the provided text? The special magic number for " + key +
                " mentioned in the provided text is");
  EXPECT_DOUBLE_EQ(p.depth, 50.0);
}

TEST(NiahGenerator, essay_depth_zero_keeps_rulers_empty_leading_part) {
  // niah.py joins ["", needle, rest] with " ", so a needle at depth 0 is preceded by a space.
  auto words = std::make_shared<const std::vector<std::string>>(split_words("One. Two."));
  NiahGenerator gen(niah_variant("niah_single_2"), 1, words);
  NiahPrompt p = gen.build_prompt(2, 5, 0.0);
  EXPECT_NE(p.text.find("afterwards.\n One of the special magic numbers"), std::string::npos) << p.text;
  EXPECT_NE(p.text.find(". One. Two.\nWhat is"), std::string::npos) << p.text;
}

TEST(NiahGenerator, essay_words_repeat_when_the_haystack_is_longer_than_the_text) {
  auto words = std::make_shared<const std::vector<std::string>>(split_words("Alpha beta. Gamma delta."));
  NiahGenerator gen(niah_variant("niah_single_2"), 1, words);
  NiahPrompt p = gen.build_prompt(10, 5, 100.0);
  EXPECT_NE(p.text.find("Alpha beta. Gamma delta. Alpha beta. Gamma delta. Alpha beta. One of"), std::string::npos)
      << p.text;
}

TEST(NiahGenerator, multikey_hides_four_keys_and_asks_for_one) {
  NiahGenerator gen(niah_variant("niah_multikey_1"), 42);
  NiahPrompt p = gen.build_prompt(2000, 11);
  std::regex re("One of the special magic numbers for ([a-z]+-[a-z]+) is: ([0-9]{7})\\.");
  std::set<std::string> keys;
  for (auto it = std::sregex_iterator(p.text.begin(), p.text.end(), re); it != std::sregex_iterator(); ++it)
    keys.insert((*it)[1]);
  EXPECT_EQ(keys.size(), 4u);
  ASSERT_EQ(p.answers.size(), 1u);
  std::smatch q;
  ASSERT_TRUE(std::regex_search(p.text, q, std::regex("What is the special magic number for ([a-z]+-[a-z]+) mentioned")));
  EXPECT_TRUE(keys.count(q[1]));
  EXPECT_NE(p.text.find("for " + std::string(q[1]) + " is: " + p.answers[0] + "."), std::string::npos);
}

TEST(NiahGenerator, multivalue_expects_all_four_values_of_the_key) {
  NiahGenerator gen(niah_variant("niah_multivalue"), 42);
  NiahPrompt p = gen.build_prompt(2000, 11);
  ASSERT_EQ(p.answers.size(), 4u);
  std::smatch q;
  ASSERT_TRUE(std::regex_search(p.text, q, std::regex("What are all the special magic numbers for ([a-z]+-[a-z]+) mentioned")));
  for (const auto& a : p.answers) {
    EXPECT_TRUE(std::regex_match(a, std::regex("[0-9]{7}")));
    EXPECT_NE(p.text.find("for " + std::string(q[1]) + " is: " + a + "."), std::string::npos) << a;
  }
}

TEST(NiahGenerator, multiquery_asks_for_four_keys) {
  NiahGenerator gen(niah_variant("niah_multiquery"), 42);
  NiahPrompt p = gen.build_prompt(2000, 11);
  ASSERT_EQ(p.answers.size(), 4u);
  EXPECT_TRUE(std::regex_search(
      p.text, std::regex("for [a-z]+-[a-z]+, [a-z]+-[a-z]+, [a-z]+-[a-z]+, and [a-z]+-[a-z]+ mentioned in the "
                         "provided text are$")))
      << p.text.substr(p.text.size() - 300);
}

TEST(NiahGenerator, needle_haystack_is_distractor_needles_that_never_reuse_the_key) {
  NiahGenerator gen(niah_variant("niah_multikey_3"), 42);
  NiahPrompt p = gen.build_prompt(30, 4);
  const std::string uuid = "[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}";
  std::vector<std::string> lines = split_lines(p.text);
  ASSERT_EQ(lines.size(), 1u + 31u + 1u);
  std::smatch q;
  ASSERT_TRUE(std::regex_search(lines.back(), q, std::regex("for (" + uuid + ") mentioned")));
  int with_key = 0;
  for (size_t i = 1; i <= 31; ++i) {
    EXPECT_TRUE(std::regex_match(lines[i], std::regex("One of the special magic uuids for " + uuid + " is: " + uuid + "\\.")))
        << lines[i];
    with_key += lines[i].find(q[1]) != std::string::npos;
  }
  EXPECT_EQ(with_key, 1);
  EXPECT_TRUE(std::regex_match(p.answers[0], std::regex(uuid)));
}

TEST(NiahGenerator, fixed_depth_pins_the_needle_line_in_noise) {
  NiahGenerator gen(niah_variant("niah_single_1"), 42);
  for (double depth : {0.0, 25.0, 50.0, 100.0}) {
    NiahPrompt p = gen.build_prompt(40, 9, depth);
    std::vector<std::string> lines = split_lines(p.text);
    int index = -1;
    for (size_t i = 1; i + 1 < lines.size(); ++i)
      if (lines[i].rfind("One of", 0) == 0) index = static_cast<int>(i) - 1;
    EXPECT_EQ(index, static_cast<int>(40 * depth / 100)) << depth;
    EXPECT_DOUBLE_EQ(p.depth, depth);
  }
}

TEST(NiahGenerator, same_seed_same_samples_and_other_seeds_differ) {
  auto bytes = TokenCounter(count_bytes);
  for (const char* name : {"niah_single_1", "niah_single_3", "niah_multikey_2"}) {
    auto a = NiahGenerator(niah_variant(name), 42).generate(3, 2048, bytes);
    auto b = NiahGenerator(niah_variant(name), 42).generate(3, 2048, bytes);
    auto c = NiahGenerator(niah_variant(name), 43).generate(3, 2048, bytes);
    for (size_t i = 0; i < 3; ++i) {
      EXPECT_EQ(a[i].prompt, b[i].prompt) << name;
      EXPECT_EQ(a[i].answers, b[i].answers) << name;
      EXPECT_NE(a[i].answers, c[i].answers) << name;
    }
    EXPECT_NE(a[0].answers, a[1].answers) << name;  // samples differ from each other
  }
}

// ---------------------------------------------------------------------------------------------------
// Length fitting with toy tokenizers: just below the target, for 1k..131k.

struct FitCase {
  const char* variant;
  int64_t tolerance;  // one haystack unit in the toy tokenizer, plus a needle's variation
};

TEST(NiahGenerator, length_fit_lands_within_one_unit_below_the_target) {
  const std::vector<FitCase> cases = {{"niah_single_1", 19 + 2}, {"niah_single_2", 4}, {"niah_multikey_2", 11 + 2}};
  for (const auto& c : cases) {
    NiahGenerator gen(niah_variant(c.variant), 42);
    for (int64_t length : {1024, 4096, 16384, 131072}) {
      int calls = 0;
      TokenCounter words = [&](const std::string& t) {
        ++calls;
        return count_words(t);
      };
      LengthFit fit = gen.fit_length(length, words);
      EXPECT_LE(fit.counter_calls, 12) << c.variant << " " << length;
      for (int64_t i = 0; i < 2; ++i) {
        NiahSample s = gen.generate_sample(i, length, fit, words);
        EXPECT_EQ(s.token_count, count_words(s.prompt));
        EXPECT_LE(s.token_count + 128, length) << c.variant << " " << length;
        EXPECT_GE(s.token_count + 128, length - c.tolerance) << c.variant << " " << length;
        EXPECT_EQ(s.length, length);
        EXPECT_EQ(s.variant, c.variant);
        EXPECT_EQ(s.id, i);
      }
    }
  }
}

TEST(NiahGenerator, length_fit_with_a_byte_counter) {
  NiahGenerator gen(niah_variant("niah_single_3"), 42);
  auto samples = gen.generate(2, 32768, TokenCounter(count_bytes));
  for (const auto& s : samples) {
    EXPECT_LE(s.token_count + 128, 32768);
    // One essay word is < 16 bytes, and samples differ from the fitted probe by their key's length
    // (the key appears three times): within 64 bytes below the target.
    EXPECT_GE(s.token_count + 128, 32768 - 64);
  }
}

TEST(NiahGenerator, a_too_small_budget_is_a_clear_error) {
  NiahGenerator gen(niah_variant("niah_single_1"), 42);
  EXPECT_THROW(gen.fit_length(100, TokenCounter(count_words)), Error);
}

}  // namespace
}  // namespace swarmt::data::niah_tests
