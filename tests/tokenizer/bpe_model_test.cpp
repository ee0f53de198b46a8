#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <random>
#include <thread>

#include "tokenizer/tokenizer_test_util.h"

namespace swarmt::tokenizer {
namespace {

using test_support::load;
using test_support::toy_tokenizer_json;
using Ids = std::vector<int32_t>;

// The textbook BPE loop, O(n^2): repeatedly merge the adjacent pair of lowest rank, leftmost first.
std::vector<std::string> naive_bpe(std::vector<std::string> symbols,
                                   const std::vector<std::pair<std::string, std::string>>& merges) {
  while (true) {
    size_t best_rank = merges.size(), best_pos = 0;
    for (size_t i = 0; i + 1 < symbols.size(); ++i) {
      for (size_t r = 0; r < best_rank; ++r) {
        if (merges[r].first == symbols[i] && merges[r].second == symbols[i + 1]) {
          best_rank = r;
          best_pos = i;
          break;
        }
      }
    }
    if (best_rank == merges.size()) return symbols;
    symbols[best_pos] += symbols[best_pos + 1];
    symbols.erase(symbols.begin() + static_cast<std::ptrdiff_t>(best_pos) + 1);
  }
}

TEST(TokenizerBpe, merges_apply_lowest_rank_first) {
  // The example of HF's BPE tests: with every merge, "unrelated" becomes one token.
  Json doc = toy_tokenizer_json(
      {"u", "n", "r", "e", "l", "a", "t", "d", "re", "at", "ed", "un", "ated", "rel", "related", "unrelated"},
      {{"r", "e"}, {"a", "t"}, {"e", "d"}, {"u", "n"}, {"at", "ed"}, {"re", "l"}, {"rel", "ated"}, {"un", "related"}});
  Tokenizer tok = load(doc);
  EXPECT_EQ(tok.encode("unrelated", false), (Ids{15}));
  EXPECT_EQ(tok.encode("related", false), (Ids{14}));
  EXPECT_EQ(tok.encode("dated", false), (Ids{7, 12}));  // d + ated (no merge joins "d" to anything)
}

TEST(TokenizerBpe, equal_ranks_merge_leftmost_first) {
  Tokenizer tok = load(toy_tokenizer_json({"a", "aa"}, {{"a", "a"}}));
  EXPECT_EQ(tok.encode("aaa", false), (Ids{1, 0}));
  EXPECT_EQ(tok.encode("aaaa", false), (Ids{1, 1}));
}

TEST(TokenizerBpe, heap_algorithm_equals_the_naive_loop_on_random_words) {
  // Alphabet {a, b, c} and merges between random pairs of existing tokens, in rank order.
  std::mt19937 rng(7);
  std::vector<std::string> tokens = {"a", "b", "c"};
  std::vector<std::pair<std::string, std::string>> merges;
  while (merges.size() < 40) {
    const std::string& left = tokens[rng() % tokens.size()];
    const std::string& right = tokens[rng() % tokens.size()];
    if (std::find(tokens.begin(), tokens.end(), left + right) != tokens.end()) continue;
    merges.emplace_back(left, right);
    tokens.push_back(left + right);
  }
  Tokenizer tok = load(toy_tokenizer_json(tokens, merges));
  for (int trial = 0; trial < 300; ++trial) {
    std::string word;
    size_t length = 1 + rng() % 40;
    for (size_t i = 0; i < length; ++i) word.push_back("abc"[rng() % 3]);
    std::vector<std::string> chars;
    for (char c : word) chars.emplace_back(1, c);
    Ids expected;
    for (const auto& piece : naive_bpe(chars, merges)) expected.push_back(*tok.token_to_id(piece));
    ASSERT_EQ(tok.encode(word, false), expected) << "word " << word;
  }
}

TEST(TokenizerBpe, byte_fallback_spells_unknown_characters_as_bytes) {
  std::vector<std::string> tokens = {"<unk>", "a"};
  char name[8];
  for (int b = 0; b < 256; ++b) {
    std::snprintf(name, sizeof(name), "<0x%02X>", b);
    tokens.push_back(name);
  }
  Json doc = toy_tokenizer_json(tokens, {});
  doc["model"]["byte_fallback"] = true;
  doc["model"]["unk_token"] = "<unk>";
  Tokenizer tok = load(doc);
  // é = C3 A9 -> <0xC3> <0xA9> (ids 2 + byte).
  EXPECT_EQ(tok.encode("aé", false), (Ids{1, 2 + 0xC3, 2 + 0xA9}));
}

TEST(TokenizerBpe, byte_fallback_uses_unk_when_a_byte_token_is_missing) {
  Json doc = toy_tokenizer_json({"<unk>", "<0x61>"}, {});
  doc["model"]["byte_fallback"] = true;
  doc["model"]["unk_token"] = "<unk>";
  Tokenizer tok = load(doc);
  EXPECT_EQ(tok.encode("a", false), (Ids{1}));
  EXPECT_EQ(tok.encode("c", false), (Ids{0}));
}

TEST(TokenizerBpe, unknown_characters_become_unk_fused_or_not_or_are_dropped) {
  Json doc = toy_tokenizer_json({"<unk>", "a", "b"}, {});
  doc["model"]["unk_token"] = "<unk>";
  EXPECT_EQ(load(doc).encode("accb", false), (Ids{1, 0, 0, 2}));
  doc["model"]["fuse_unk"] = true;
  EXPECT_EQ(load(doc).encode("accb", false), (Ids{1, 0, 2}));
  doc["model"]["unk_token"] = nullptr;  // HF drops characters it cannot represent
  EXPECT_EQ(load(doc).encode("accb", false), (Ids{1, 2}));
}

TEST(TokenizerBpe, continuing_subword_prefix_and_end_of_word_suffix) {
  Json doc = toy_tokenizer_json({"a", "##b", "##c", "ab", "abc"}, {{"a", "##b"}, {"ab", "##c"}});
  doc["model"]["continuing_subword_prefix"] = "##";
  doc["model"]["unk_token"] = "[UNK]";
  doc["model"]["vocab"]["[UNK]"] = 5;
  Tokenizer tok = load(doc);
  EXPECT_EQ(tok.encode("ab", false), (Ids{3}));
  EXPECT_EQ(tok.encode("abc", false), (Ids{4}));

  Json suffix = toy_tokenizer_json({"a", "b</w>", "ab</w>", "b"}, {{"a", "b</w>"}});
  suffix["model"]["end_of_word_suffix"] = "</w>";
  EXPECT_EQ(load(suffix).encode("ab", false), (Ids{2}));
}

TEST(TokenizerBpe, ignore_merges_emits_a_word_that_is_in_the_vocabulary) {
  // "ab" is in the vocabulary but no merge builds it.
  Json doc = toy_tokenizer_json({"a", "b", "ab"}, {});
  EXPECT_EQ(load(doc).encode("ab", false), (Ids{0, 1}));
  doc["model"]["ignore_merges"] = true;
  EXPECT_EQ(load(doc).encode("ab", false), (Ids{2}));
}

TEST(TokenizerBpe, legacy_string_merges_equal_pair_merges) {
  Json pairs = toy_tokenizer_json({"h", "e", "l", "o", "he", "ll", "hell", "hello"},
                                  {{"h", "e"}, {"l", "l"}, {"he", "ll"}, {"hell", "o"}});
  Json legacy = pairs;
  legacy["model"]["merges"] = Json::array({"h e", "l l", "he ll", "hell o"});
  EXPECT_EQ(load(pairs).encode("hello", false), (Ids{7}));
  EXPECT_EQ(load(legacy).encode("hello", false), (Ids{7}));
  EXPECT_EQ(load(legacy).encode("hellhe", false), (Ids{6, 4}));
}

TEST(TokenizerBpe, a_long_single_word_encodes_completely) {
  // Gemma treats a whole text segment as one word: 200k symbols must go through the heap merge.
  Tokenizer tok = load(toy_tokenizer_json({"a", "b", "ab", "abab"}, {{"a", "b"}, {"ab", "ab"}}));
  std::string word;
  for (int i = 0; i < 100000; ++i) word += "ab";
  Ids ids = tok.encode(word, false);
  ASSERT_EQ(ids.size(), 50000u);
  EXPECT_TRUE(std::all_of(ids.begin(), ids.end(), [](int32_t id) { return id == 3; }));
}

TEST(TokenizerBpe, cached_words_give_the_same_ids_from_many_threads) {
  Json doc = toy_tokenizer_json({"a", "b", "ab", " "}, {{"a", "b"}});
  doc["pre_tokenizer"] = Json::parse(R"({"type": "WhitespaceSplit"})");
  Tokenizer tok = load(doc);
  const Ids expected = tok.encode("ab ba aab abab", false);
  std::vector<std::thread> threads;
  std::vector<int> failures(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 500; ++i) failures[t] += tok.encode("ab ba aab abab", false) != expected;
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(failures, (std::vector<int>{0, 0, 0, 0}));
}

}  // namespace
}  // namespace swarmt::tokenizer
