#include <gtest/gtest.h>

#include "tokenizer/tokenizer_test_util.h"

namespace swarmt::tokenizer {
namespace {

using test_support::load;
using test_support::toy_tokenizer_json;
using Ids = std::vector<int32_t>;

Json added_token(int id, const std::string& content, bool special = true) {
  Json token = Json::object();
  token["id"] = id;
  token["content"] = content;
  token["special"] = special;
  token["normalized"] = false;
  token["lstrip"] = false;
  token["rstrip"] = false;
  token["single_word"] = false;
  return token;
}

// Vocabulary: the letters a..e, space and '_'. Added tokens are appended by each test.
Json letters_json() { return toy_tokenizer_json({"a", "b", "c", "d", "e", " ", "_"}, {}); }

TEST(TokenizerAddedTokens, leftmost_longest_match_wins) {
  Json doc = letters_json();
  doc["added_tokens"] = Json::array({added_token(10, "<s>"), added_token(11, "<s><s>"), added_token(12, "s><")});
  Tokenizer tok = load(doc);
  // At offset 0 both <s> and <s><s> start: the longer wins; "s><" starting later never gets a chance.
  EXPECT_EQ(tok.encode("<s><s>a", false), (Ids{11, 0}));
  EXPECT_EQ(tok.encode("a<s>b", false), (Ids{0, 10, 1}));
  EXPECT_EQ(tok.encode("<s", false).size(), 0u);  // '<' and 's' are not in the toy vocabulary: dropped
}

TEST(TokenizerAddedTokens, lstrip_and_rstrip_absorb_neighbouring_whitespace) {
  Json doc = letters_json();
  Json mask = added_token(10, "<mask>");
  mask["lstrip"] = true;
  mask["rstrip"] = true;
  doc["added_tokens"] = Json::array({mask});
  Tokenizer tok = load(doc);
  EXPECT_EQ(tok.encode("a  <mask>  b", false), (Ids{0, 10, 1}));
  mask["lstrip"] = false;
  doc["added_tokens"] = Json::array({mask});
  EXPECT_EQ(load(doc).encode("a  <mask>  b", false), (Ids{0, 5, 5, 10, 1}));
}

TEST(TokenizerAddedTokens, single_word_tokens_only_match_whole_words) {
  Json doc = letters_json();
  Json word = added_token(10, "ab", /*special=*/false);
  word["single_word"] = true;
  doc["added_tokens"] = Json::array({word});
  Tokenizer tok = load(doc);
  EXPECT_EQ(tok.encode("ab", false), (Ids{10}));
  EXPECT_EQ(tok.encode("c ab d", false), (Ids{2, 5, 10, 5, 3}));
  EXPECT_EQ(tok.encode("cab", false), (Ids{2, 0, 1}));  // preceded by a word character
  EXPECT_EQ(tok.encode("ab_", false), (Ids{0, 1, 6}));  // '_' is a word character
}

TEST(TokenizerAddedTokens, normalized_tokens_match_the_normalized_text) {
  Json doc = letters_json();
  doc["normalizer"] = Json::parse(R"({"type": "Lowercase"})");
  Json normalized = added_token(10, "ABC", /*special=*/false);
  normalized["normalized"] = true;  // its content is lowercased too, then matched after normalization
  Json raw = added_token(11, "DE", /*special=*/false);  // matched on the raw text only
  doc["added_tokens"] = Json::array({normalized, raw});
  Tokenizer tok = load(doc);
  EXPECT_EQ(tok.encode("aBc", false), (Ids{10}));
  EXPECT_EQ(tok.encode("DE", false), (Ids{11}));
  EXPECT_EQ(tok.encode("de", false), (Ids{3, 4}));
}

TEST(TokenizerAddedTokens, special_tokens_are_flagged_and_skipped_on_request) {
  Json doc = letters_json();
  doc["added_tokens"] = Json::array({added_token(10, "<bos>"), added_token(11, "<x>", /*special=*/false)});
  Tokenizer tok = load(doc);
  EXPECT_TRUE(tok.is_special(10));
  EXPECT_FALSE(tok.is_special(11));
  EXPECT_FALSE(tok.is_special(0));
  Ids ids = tok.encode("<bos>ab<x>", false);
  EXPECT_EQ(ids, (Ids{10, 0, 1, 11}));
  EXPECT_EQ(tok.decode(ids, /*skip_special_tokens=*/false), "<bos> a b <x>");  // no decoder: joined by spaces
  EXPECT_EQ(tok.decode(ids, /*skip_special_tokens=*/true), "a b <x>");
  EXPECT_EQ(tok.token_to_id("<bos>"), 10);
  EXPECT_EQ(tok.id_to_token(11), "<x>");
  EXPECT_EQ(tok.vocab_size(), 12);
}

}  // namespace
}  // namespace swarmt::tokenizer
