#include "swarmt/tokenizer/pre_tokenizer.h"

#include <gtest/gtest.h>

#include "tokenizer/tokenizer_test_util.h"

namespace swarmt::tokenizer {
namespace {

using test_support::ThrowsBadInput;

// Pieces of `text` (taken as the start of the input) after the pre-tokenizer described by `json_text`.
std::vector<std::string> pieces_of(const std::string& json_text, const std::vector<PreToken>& input) {
  auto pre_tokenizer = make_pre_tokenizer(Json::parse(json_text), {"tokenizer.json", "pre_tokenizer"});
  std::vector<PreToken> pieces = input;
  pre_tokenizer->pre_tokenize(pieces);
  std::vector<std::string> out;
  for (const auto& piece : pieces) out.push_back(piece.text);
  return out;
}
std::vector<std::string> pieces_of(const std::string& json_text, const std::string& text) {
  return pieces_of(json_text, {{text, true}});
}

std::string split_json(const std::string& behavior) {
  return R"({"type": "Split", "pattern": {"String": "-"}, "behavior": ")" + behavior + R"(", "invert": false})";
}

TEST(TokenizerPreTokenizers, split_behaviours_match_the_hf_documentation) {
  const std::string text = "the-final--countdown";
  using V = std::vector<std::string>;
  EXPECT_EQ(pieces_of(split_json("Removed"), text), (V{"the", "final", "countdown"}));
  EXPECT_EQ(pieces_of(split_json("Isolated"), text), (V{"the", "-", "final", "-", "-", "countdown"}));
  EXPECT_EQ(pieces_of(split_json("MergedWithPrevious"), text), (V{"the-", "final-", "-", "countdown"}));
  EXPECT_EQ(pieces_of(split_json("MergedWithNext"), text), (V{"the", "-final", "-", "-countdown"}));
  EXPECT_EQ(pieces_of(split_json("Contiguous"), text), (V{"the", "-", "final", "--", "countdown"}));
}

TEST(TokenizerPreTokenizers, split_regex_with_invert_keeps_the_matches) {
  using V = std::vector<std::string>;
  EXPECT_EQ(pieces_of(R"({"type": "Split", "pattern": {"Regex": "\\p{L}+"}, "behavior": "Removed", "invert": true})",
                      "héllo, wörld 42"),
            (V{"héllo", "wörld"}));
}

TEST(TokenizerPreTokenizers, byte_level_splits_like_gpt2_and_maps_bytes) {
  using V = std::vector<std::string>;
  // ' ?\p{L}+' keeps the space with the word; '\s+(?!\S)' leaves the last space to the next word.
  EXPECT_EQ(pieces_of(R"({"type": "ByteLevel", "add_prefix_space": false, "use_regex": true})", "Hello world's  end\n"),
            (V{"Hello", "\xC4\xA0world", "'s", "\xC4\xA0",
               "\xC4\xA0"
               "end",
               "\xC4\x8A"}));
  EXPECT_EQ(pieces_of(R"({"type": "ByteLevel", "add_prefix_space": true, "use_regex": false})", "hi"),
            (V{"\xC4\xA0hi"}));
  EXPECT_EQ(pieces_of(R"({"type": "ByteLevel", "add_prefix_space": false, "use_regex": false})", "é"),
            (V{"\xC3\x83\xC2\xA9"}));  // the two bytes C3 A9 as alphabet characters
}

TEST(TokenizerPreTokenizers, qwen_style_regex_matches_contractions_in_any_case) {
  using V = std::vector<std::string>;
  const std::string qwen = R"({"type": "Split", "pattern": {"Regex":
      "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"},
      "behavior": "Isolated", "invert": false})";
  EXPECT_EQ(pieces_of(qwen, "I'M here 123"), (V{"I", "'M", " here", " ", "1", "2", "3"}));
  EXPECT_EQ(pieces_of(qwen, "a  \n\nb"), (V{"a", "  \n\n", "b"}));
}

TEST(TokenizerPreTokenizers, digits_are_isolated_or_grouped) {
  using V = std::vector<std::string>;
  EXPECT_EQ(pieces_of(R"({"type": "Digits", "individual_digits": true})", "ab 123"), (V{"ab ", "1", "2", "3"}));
  EXPECT_EQ(pieces_of(R"({"type": "Digits", "individual_digits": false})", "ab 123c٣٤"), (V{"ab ", "123", "c", "٣٤"}));
}

TEST(TokenizerPreTokenizers, metaspace_prepend_schemes) {
  using V = std::vector<std::string>;
  const std::string always = R"({"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": true})";
  const std::string first = R"({"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first", "split": true})";
  const std::string never = R"({"type": "Metaspace", "replacement": "▁", "prepend_scheme": "never", "split": false})";
  EXPECT_EQ(pieces_of(always, "Hey  friend"), (V{"▁Hey", "▁", "▁friend"}));
  // "first" prefixes only the piece at the start of the text (not one that follows an added token).
  EXPECT_EQ(pieces_of(first, {{"Hey", true}, {"you", false}}), (V{"▁Hey", "you"}));
  EXPECT_EQ(pieces_of(never, "a b"), (V{"a▁b"}));
  // Files written before prepend_scheme existed carry add_prefix_space.
  EXPECT_EQ(pieces_of(R"({"type": "Metaspace", "replacement": "▁", "add_prefix_space": false})", "a b"),
            (V{"a", "▁b"}));
}

TEST(TokenizerPreTokenizers, whitespace_punctuation_and_sequence) {
  using V = std::vector<std::string>;
  EXPECT_EQ(pieces_of(R"({"type": "Whitespace"})", "Hey friend!!  How's it?"),
            (V{"Hey", "friend", "!!", "How", "'", "s", "it", "?"}));
  EXPECT_EQ(pieces_of(R"({"type": "WhitespaceSplit"})", " a\u3000b\tc "), (V{"a", "b", "c"}));
  EXPECT_EQ(pieces_of(R"({"type": "Punctuation"})", "a,b«c»"), (V{"a", ",", "b", "«", "c", "»"}));
  EXPECT_EQ(pieces_of(R"({"type": "Sequence", "pretokenizers": [{"type": "WhitespaceSplit"},
                          {"type": "Digits", "individual_digits": true}]})",
                      "ab12 c"),
            (V{"ab", "1", "2", "c"}));
}

TEST(TokenizerPreTokenizers, malformed_components_are_rejected_with_their_path) {
  EXPECT_TRUE(ThrowsBadInput(
      [] {
        pieces_of(R"({"type": "Sequence", "pretokenizers": [{"type": "Digits"},
                                      {"type": "BertPreTokenizer"}]})",
                  "x");
      },
      {"pre_tokenizer.pretokenizers[1].type 'BertPreTokenizer' is not supported"}));
  EXPECT_TRUE(ThrowsBadInput([] { pieces_of(split_json("Sideways"), "x"); },
                             {"field 'pre_tokenizer.behavior'", "'Sideways' is not supported"}));
  EXPECT_TRUE(ThrowsBadInput(
      [] { pieces_of(R"({"type": "Split", "pattern": {"Regex": "(unclosed"}, "behavior": "Isolated"})", "x"); },
      {"field 'pre_tokenizer.pattern.Regex': invalid regular expression \"(unclosed\""}));
  EXPECT_TRUE(ThrowsBadInput([] { pieces_of(R"({"type": "Metaspace", "replacement": "ab"})", "x"); },
                             {"field 'pre_tokenizer.replacement' must be exactly one character"}));
}

}  // namespace
}  // namespace swarmt::tokenizer
