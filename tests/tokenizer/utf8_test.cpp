#include "swarmt/tokenizer/utf8.h"

#include <gtest/gtest.h>

#include "swarmt/core/error.h"
#include "swarmt/tokenizer/byte_level.h"
#include "swarmt/tokenizer/unicode.h"

namespace swarmt::tokenizer {
namespace {

TEST(TokenizerUtf8, valid_text_has_no_invalid_byte) {
  EXPECT_FALSE(find_invalid_utf8("plain ascii").has_value());
  EXPECT_FALSE(find_invalid_utf8("naïve 日本語 🦙 \xF4\x8F\xBF\xBF").has_value());  // includes U+10FFFF
  EXPECT_FALSE(find_invalid_utf8("").has_value());
}

TEST(TokenizerUtf8, first_invalid_byte_is_reported) {
  EXPECT_EQ(find_invalid_utf8("ab\xC0\x80"), 2u);        // overlong NUL
  EXPECT_EQ(find_invalid_utf8("a\xED\xA0\x80"), 1u);     // UTF-16 surrogate D800
  EXPECT_EQ(find_invalid_utf8("abc\xF0\x9F"), 3u);       // truncated 4-byte sequence
  EXPECT_EQ(find_invalid_utf8("\xF4\x90\x80\x80"), 0u);  // above U+10FFFF
  EXPECT_EQ(find_invalid_utf8("x\x80"), 1u);             // stray continuation byte
  try {
    require_valid_utf8("ok\xFF", "text to encode");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput);
    EXPECT_NE(std::string(e.what()).find("text to encode is not valid UTF-8 (bad byte 0xFF at byte offset 2)"),
              std::string::npos)
        << e.what();
  }
}

TEST(TokenizerUtf8, lossy_decoding_replaces_each_maximal_subpart) {
  // The example of the Unicode standard (Table 3-8): 61 F1 80 80 E1 80 C2 62 80 63 80 BF 64.
  const std::string f = std::string(kReplacementChar);
  EXPECT_EQ(utf8_lossy("\x61\xF1\x80\x80\xE1\x80\xC2\x62\x80\x63\x80\xBF\x64"),
            "a" + f + f + f + "b" + f + "c" + f + f + "d");
  EXPECT_EQ(utf8_lossy("valid 🦙"), "valid 🦙");
  EXPECT_EQ(utf8_lossy("\xF0\x9F\xA6"), f);  // an incomplete character is one replacement
}

TEST(TokenizerUtf8, incomplete_suffix_is_what_a_stream_must_hold_back) {
  EXPECT_EQ(incomplete_utf8_suffix("a\xF0\x9F"), 2u);
  EXPECT_EQ(incomplete_utf8_suffix("a\xF0\x9F\xA6"), 3u);
  EXPECT_EQ(incomplete_utf8_suffix("a\xF0\x9F\xA6\x99"), 0u);
  EXPECT_EQ(incomplete_utf8_suffix("\xC3"), 1u);
  EXPECT_EQ(incomplete_utf8_suffix("\x80"), 0u);      // invalid, not incomplete
  EXPECT_EQ(incomplete_utf8_suffix("\xC3\x41"), 0u);  // broken, nothing to wait for
  EXPECT_EQ(incomplete_utf8_suffix(""), 0u);
}

TEST(TokenizerUtf8, byte_level_alphabet_is_gpt2s_and_round_trips_every_byte) {
  const auto& alphabet = byte_level_alphabet();
  EXPECT_EQ(alphabet[' '], "\xC4\xA0");   // Ġ U+0120
  EXPECT_EQ(alphabet['\n'], "\xC4\x8A");  // Ċ U+010A
  EXPECT_EQ(alphabet['A'], "A");
  EXPECT_EQ(alphabet[0xE9], "\xC3\xA9");  // é stands for itself
  std::string all_bytes;
  for (int b = 0; b < 256; ++b) all_bytes.push_back(static_cast<char>(b));
  std::string encoded = byte_level_encode(all_bytes);
  EXPECT_FALSE(find_invalid_utf8(encoded).has_value());
  std::string decoded;
  ASSERT_TRUE(byte_level_decode_token(encoded, decoded));
  EXPECT_EQ(decoded, all_bytes);
  std::string untouched = "keep";
  EXPECT_FALSE(byte_level_decode_token("a b", untouched));  // ' ' is not in the alphabet
  EXPECT_EQ(untouched, "keep");
}

TEST(TokenizerUtf8, unicode_classes_follow_rust_char_methods) {
  EXPECT_TRUE(is_unicode_whitespace(U'\u3000'));
  EXPECT_TRUE(is_unicode_whitespace(U'\u0085'));
  EXPECT_FALSE(is_unicode_whitespace(U'\u200B'));  // zero-width space is not White_Space
  EXPECT_TRUE(is_unicode_numeric(U'\u0663'));      // Arabic-Indic three
  EXPECT_TRUE(is_unicode_numeric(U'\u00BD'));      // ½ (No)
  EXPECT_FALSE(is_unicode_numeric(U'x'));
  EXPECT_TRUE(is_unicode_punctuation(U'$'));        // ASCII punctuation includes symbols
  EXPECT_TRUE(is_unicode_punctuation(U'\u00AB'));   // «
  EXPECT_FALSE(is_unicode_punctuation(U'\u20AC'));  // € is a symbol, not punctuation
  EXPECT_TRUE(is_unicode_word_char(U'\u00E9'));
  EXPECT_TRUE(is_unicode_word_char(U'_'));
  EXPECT_FALSE(is_unicode_word_char(U'-'));
}

}  // namespace
}  // namespace swarmt::tokenizer
