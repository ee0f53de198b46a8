#include "swarmt/data/synthetic/synthetic_tasks.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <regex>
#include <set>

#include "swarmt/core/error.h"
#include "swarmt/data/synthetic/essay_text.h"
#include "swarmt/data/synthetic/synthetic_tasks_length_fit.h"
#include "swarmt/data/synthetic/synthetic_tasks_random.h"
#include "swarmt/data/synthetic/word_lists.h"
#include "test_util.h"

namespace swarmt::data {
namespace {

int64_t count_words(const std::string& text) { return static_cast<int64_t>(split_words(text).size()); }

// ---------------------------------------------------------------------------------------------------
// Random draws

TEST(TaskRng, same_seed_gives_the_same_draws_and_ranges_are_respected) {
  TaskRng a(7), b(7), c(8);
  std::vector<int64_t> da, db, dc;
  for (int i = 0; i < 200; ++i) {
    da.push_back(a.uniform_int(-3, 5));
    db.push_back(b.uniform_int(-3, 5));
    dc.push_back(c.uniform_int(-3, 5));
  }
  EXPECT_EQ(da, db);
  EXPECT_NE(da, dc);
  std::set<int64_t> seen(da.begin(), da.end());
  EXPECT_EQ(seen, (std::set<int64_t>{-3, -2, -1, 0, 1, 2, 3, 4, 5}));
}

TEST(TaskRng, sample_without_replacement_gives_distinct_values_in_range) {
  TaskRng rng(1);
  for (auto [n, k] : std::vector<std::pair<int64_t, int64_t>>{{10, 10}, {1000, 7}, {40, 4}, {5, 0}}) {
    auto s = rng.sample_without_replacement(n, k);
    ASSERT_EQ(static_cast<int64_t>(s.size()), k);
    EXPECT_EQ(static_cast<int64_t>(std::set<int64_t>(s.begin(), s.end()).size()), k);
    for (int64_t v : s) EXPECT_TRUE(v >= 0 && v < n);
  }
}

TEST(TaskRng, uuid4_has_version_and_variant_bits) {
  TaskRng rng(3);
  std::regex uuid("^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$");
  for (int i = 0; i < 50; ++i) EXPECT_TRUE(std::regex_match(rng.uuid4(), uuid));
}

// ---------------------------------------------------------------------------------------------------
// MQAR

TEST(Mqar, keys_values_and_targets_follow_the_zoology_layout) {
  MqarConfig c = MqarConfig::zoology(/*vocab_size=*/8192, /*seq_len=*/256, /*num_kv_pairs=*/16);
  for (uint64_t seed = 0; seed < 20; ++seed) {
    MqarExample ex = generate_mqar_example(c, seed);
    ASSERT_EQ(ex.tokens.size(), 256u);
    ASSERT_EQ(ex.targets.size(), 256u);
    std::map<int64_t, int64_t> value_of;  // key -> value from the prefix
    for (int j = 0; j < 16; ++j) {
      int64_t key = ex.tokens[2 * j], value = ex.tokens[2 * j + 1];
      EXPECT_TRUE(key >= 1 && key < 4096) << key;
      EXPECT_TRUE(value >= 4096 && value < 8192) << value;
      EXPECT_TRUE(value_of.emplace(key, value).second) << "duplicate key " << key;
    }
    // Targets only at the query positions; each key queried exactly once, after the prefix, at an even
    // offset; the target there is the key's value.
    std::set<int64_t> queried;
    int num_targets = 0;
    for (int p = 0; p < 256; ++p) {
      if (ex.targets[p] == kIgnoreTarget) continue;
      ++num_targets;
      EXPECT_GE(p, 32);
      EXPECT_EQ((p - 32) % 2, 0);
      ASSERT_TRUE(value_of.count(ex.tokens[p]));
      EXPECT_EQ(ex.targets[p], value_of[ex.tokens[p]]);
      EXPECT_TRUE(queried.insert(ex.tokens[p]).second);
    }
    EXPECT_EQ(num_targets, 16);
    EXPECT_EQ(queried.size(), 16u);
    EXPECT_EQ(ex.query_positions.size(), 16u);
  }
}

TEST(Mqar, non_query_slots_are_filler_unless_randomised) {
  MqarConfig c = MqarConfig::zoology(256, 64, 4);
  c.random_non_queries = false;
  MqarExample ex = generate_mqar_example(c, 5);
  std::set<int64_t> queries(ex.query_positions.begin(), ex.query_positions.end());
  for (int p = 8; p < 64; ++p) {
    if (!queries.count(p)) {
      EXPECT_EQ(ex.tokens[p], 0) << p;
    }
  }
  c.random_non_queries = true;
  MqarExample noisy = generate_mqar_example(c, 5);
  int nonzero = 0;
  for (int p = 8; p < 64; ++p) nonzero += noisy.tokens[p] != 0;
  EXPECT_GT(nonzero, 40);
}

TEST(Mqar, gaps_follow_a_power_law_favouring_short_distances) {
  MqarConfig c = MqarConfig::zoology(8192, 256, 4);
  const int64_t space = (256 - 8) / 2;
  int short_gaps = 0, total = 0;
  for (uint64_t seed = 0; seed < 200; ++seed) {
    for (int64_t p : generate_mqar_example(c, seed).query_positions) {
      short_gaps += (p - 8) / 2 < space / 4;
      ++total;
    }
  }
  // p(gap) ~ 1/(gap+1): about 70% of gaps fall in the first quarter (uniform gaps would give 25%).
  EXPECT_GT(short_gaps, total / 2);
}

TEST(Mqar, same_seed_same_example) {
  MqarConfig c = MqarConfig::zoology(8192, 128, 8);
  EXPECT_EQ(generate_mqar_example(c, 11).tokens, generate_mqar_example(c, 11).tokens);
  EXPECT_NE(generate_mqar_example(c, 11).tokens, generate_mqar_example(c, 12).tokens);
}

TEST(Mqar, impossible_configs_are_rejected_by_name) {
  MqarConfig c = MqarConfig::zoology(8192, 63, 4);
  EXPECT_THROW(validate_mqar_config(c), Error);
  c = MqarConfig::zoology(8192, 16, 8);  // 16 prefix + 16 query slots > 16
  try {
    validate_mqar_config(c);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("too short"), std::string::npos) << e.what();
  }
  c = MqarConfig::zoology(8192, 64, 4);
  c.value_begin = 100;  // overlaps the keys
  EXPECT_THROW(validate_mqar_config(c), Error);
}

// ---------------------------------------------------------------------------------------------------
// Passkey

TEST(Passkey, prompt_is_the_classic_text_with_the_key_at_the_chosen_depth) {
  PasskeyConfig c;
  c.filler_units = 2;
  c.depth_percent = 50;
  PasskeyExample ex = generate_passkey_example(c, 9);
  const std::string f = "The grass is green. The sky is blue. The sun is yellow. Here we go. There and back again.";
  const std::string k = ex.answer;
  EXPECT_EQ(ex.prompt,
            "There is an important info hidden inside a lot of irrelevant text. Find it and memorize them. I will "
            "quiz you about the important information there.\n" +
                f + "\nThe pass key is " + k + ". Remember it. " + k + " is the pass key.\n" + f +
                "\nWhat is the pass key? The pass key is");
  int64_t key = std::stoll(k);
  EXPECT_TRUE(key >= 1 && key <= 50000);
}

TEST(Passkey, length_fit_lands_just_below_the_budget) {
  PasskeyConfig c;
  c.depth_percent = 25;
  for (int64_t length : {1024, 8192, 32768}) {
    PasskeyExample ex = generate_passkey_for_length(c, length, 16, count_words, 1);
    int64_t used = count_words(ex.prompt) + 16;
    EXPECT_EQ(ex.token_count, count_words(ex.prompt));
    EXPECT_LE(used, length);
    EXPECT_GT(used, length - 19);  // one filler unit is 19 words
  }
}

// ---------------------------------------------------------------------------------------------------
// Length fitting

TEST(LengthFit, finds_the_largest_fitting_size_in_few_counter_calls) {
  // Prompt of 37 fixed words + 3 words per unit: the answer is floor((budget - 37) / 3).
  auto build = [](int64_t units) {
    std::string s(37 * 2, ' ');
    for (int i = 0; i < 37; ++i) s[2 * i] = 'w';
    for (int64_t u = 0; u < units; ++u) s += "a b c ";
    return s;
  };
  for (int64_t length : {1000, 4096, 65536, 131072}) {
    int calls = 0;
    TokenCounter counter = [&](const std::string& t) {
      ++calls;
      return count_words(t);
    };
    LengthFitOptions o;
    o.max_seq_length = length;
    o.tokens_to_generate = 128;
    o.first_probe = 25;
    LengthFit fit = fit_haystack_size(build, counter, o);
    EXPECT_EQ(fit.units, (length - 128 - 37) / 3) << length;
    EXPECT_EQ(fit.prompt_tokens, 37 + 3 * fit.units);
    EXPECT_EQ(fit.counter_calls, calls);
    EXPECT_LE(calls, 8) << length;
  }
}

TEST(LengthFit, a_budget_smaller_than_the_template_is_a_clear_error) {
  LengthFitOptions o;
  o.max_seq_length = 100;
  o.tokens_to_generate = 10;
  o.min_units = 1;
  try {
    fit_haystack_size([](int64_t) { return std::string(200, 'x'); },
                      [](const std::string& t) { return static_cast<int64_t>(t.size()); }, o);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput);
    EXPECT_NE(std::string(e.what()).find("too small"), std::string::npos) << e.what();
  }
}

// ---------------------------------------------------------------------------------------------------
// Essay text and sentence splitting

TEST(EssayText, builtin_text_is_long_english_prose_without_digits) {
  const std::string& text = builtin_essay_text();
  EXPECT_GE(text.size(), 1500u * 1024u);
  EXPECT_EQ(std::count_if(text.begin(), text.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }),
            0);
  EXPECT_GE(builtin_essay_words().size(), 200000u);
  // The splitter recovers the sentences: each starts with a capital and ends with . or ?.
  std::vector<std::string> words(builtin_essay_words().begin(), builtin_essay_words().begin() + 5000);
  std::string first;
  for (size_t i = 0; i < words.size(); ++i) first += (i ? " " : "") + words[i];
  auto sentences = split_sentences(first);
  EXPECT_GT(sentences.size(), 200u);
  for (size_t i = 0; i + 1 < sentences.size(); ++i) {
    EXPECT_TRUE(std::isupper(static_cast<unsigned char>(sentences[i][0]))) << sentences[i];
    char last = sentences[i].back();
    EXPECT_TRUE(last == '.' || last == '?') << sentences[i];
  }
}

TEST(EssayText, sentence_splitter_handles_abbreviations_initials_quotes_and_lowercase) {
  EXPECT_EQ(split_sentences("Mr. Smith went home. He slept! Did he? Yes."),
            (std::vector<std::string>{"Mr. Smith went home.", "He slept!", "Did he?", "Yes."}));
  EXPECT_EQ(split_sentences("He said \"stop.\" Then he left. J. R. Doe agreed, e.g. Bob did."),
            (std::vector<std::string>{"He said \"stop.\"", "Then he left.", "J. R. Doe agreed, e.g. Bob did."}));
  EXPECT_EQ(split_sentences("It was 3 p.m. and late... Really. (It was.) Next"),
            (std::vector<std::string>{"It was 3 p.m. and late...", "Really.", "(It was.)", "Next"}));
  EXPECT_EQ(split_sentences("no terminal punctuation"), (std::vector<std::string>{"no terminal punctuation"}));
  EXPECT_TRUE(split_sentences("").empty());
}

TEST(EssayText, joining_split_sentences_gives_back_the_text) {
  std::string text = "First one. Second one? Third! \"Quoted.\" Last";
  auto s = split_sentences(text);
  std::string joined;
  for (size_t i = 0; i < s.size(); ++i) joined += (i ? " " : "") + s[i];
  EXPECT_EQ(joined, text);
}

TEST(EssayText, words_are_split_on_any_whitespace) {
  EXPECT_EQ(split_words("  a\tb\n\nc  d "), (std::vector<std::string>{"a", "b", "c", "d"}));
}

TEST(EssayText, directory_of_txt_files_is_read_in_name_order) {
  swarmt::testing::TempDir dir;
  swarmt::testing::write_file(dir.file("b.txt"), "Second file.");
  swarmt::testing::write_file(dir.file("a.txt"), "First file.");
  swarmt::testing::write_file(dir.file("ignored.md"), "Not me.");
  EXPECT_EQ(load_essay_directory(dir.path()), "First file.\nSecond file.");
}

TEST(EssayText, missing_or_empty_essay_directories_are_clear_errors) {
  EXPECT_THROW(load_essay_directory("/nonexistent/essays"), Error);
  swarmt::testing::TempDir dir;
  try {
    load_essay_directory(dir.path());
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no .txt files"), std::string::npos) << e.what();
  }
  swarmt::testing::write_file(dir.file("blank.txt"), " \n\t ");
  EXPECT_THROW(load_essay_directory(dir.path()), Error);
}

TEST(WordLists, lists_are_large_unique_lowercase_words) {
  for (const auto* list : {&common_adjectives(), &common_nouns()}) {
    std::set<std::string> unique(list->begin(), list->end());
    EXPECT_EQ(unique.size(), list->size());
    EXPECT_TRUE(std::is_sorted(list->begin(), list->end()));
    for (const auto& w : *list) {
      EXPECT_FALSE(w.empty());
      for (char c : w) EXPECT_TRUE(c >= 'a' && c <= 'z') << w;
    }
  }
  EXPECT_GE(common_adjectives().size(), 300u);
  EXPECT_GE(common_nouns().size(), 600u);
}

}  // namespace
}  // namespace swarmt::data
