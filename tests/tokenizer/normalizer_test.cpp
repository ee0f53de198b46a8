#include "swarmt/tokenizer/normalizer.h"

#include <gtest/gtest.h>

#include "tokenizer/tokenizer_test_util.h"

namespace swarmt::tokenizer {
namespace {

using test_support::ThrowsBadInput;

std::string normalize(const std::string& json_text, const std::string& text) {
  return make_normalizer(Json::parse(json_text), {"tokenizer.json", "normalizer"})->normalize(text);
}

TEST(TokenizerNormalizers, unicode_forms_compose_and_decompose) {
  EXPECT_EQ(normalize(R"({"type": "NFC"})", "e\u0301 A\u030A \u1100\u1161\u11A8"), "\u00E9 \u00C5 \uAC01");
  EXPECT_EQ(normalize(R"({"type": "NFD"})", "\u00E9"), "e\u0301");
  EXPECT_EQ(normalize(R"({"type": "NFKC"})", "\uFB01 \u2126 \uFF11"), "fi \u03A9 1");  // ligature, ohm, full-width
  EXPECT_EQ(normalize(R"({"type": "NFKD"})", "\uFB01\u00E9"), "fie\u0301");
  EXPECT_EQ(normalize(R"({"type": "NFC"})", "ascii stays"), "ascii stays");
}

TEST(TokenizerNormalizers, lowercase_maps_each_code_point_without_context) {
  EXPECT_EQ(normalize(R"({"type": "Lowercase"})", "HeLLo ÀÉÎ"), "hello àéî");
  EXPECT_EQ(normalize(R"({"type": "Lowercase"})", "\u0130"), "i\u0307");  // İ -> i + combining dot
  // Rust's char::to_lowercase has no final-sigma rule: every capital sigma becomes σ.
  EXPECT_EQ(normalize(R"({"type": "Lowercase"})", "ΣΑΣ"), "σασ");
}

TEST(TokenizerNormalizers, replace_uses_literal_or_regex_patterns) {
  EXPECT_EQ(normalize(R"({"type": "Replace", "pattern": {"String": " "}, "content": "▁"})", " a  b "), "▁a▁▁b▁");
  EXPECT_EQ(normalize(R"({"type": "Replace", "pattern": {"Regex": "\\s+"}, "content": " "})", "a \t\n b"), "a b");
  EXPECT_EQ(normalize(R"({"type": "Replace", "pattern": {"String": "aa"}, "content": "b"})", "aaa"), "ba");
}

TEST(TokenizerNormalizers, prepend_strip_and_sequence) {
  EXPECT_EQ(normalize(R"({"type": "Prepend", "prepend": "▁"})", "x"), "▁x");
  EXPECT_EQ(normalize(R"({"type": "Prepend", "prepend": "▁"})", ""), "");  // nothing to prefix
  EXPECT_EQ(normalize(R"({"type": "Strip", "strip_left": true, "strip_right": true})", " \u3000x y\t\n"), "x y");
  EXPECT_EQ(normalize(R"({"type": "Strip", "strip_left": false, "strip_right": true})", "  x  "), "  x");
  EXPECT_EQ(normalize(R"({"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": "▁"},
                          {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]})",
                      "Hello world"),
            "▁Hello▁world");
}

TEST(TokenizerNormalizers, a_chain_that_multiplies_its_input_is_refused) {
  // 20 steps "a" -> "aa" would turn one byte into a megabyte; real chains grow text by small factors.
  std::string steps;
  for (int i = 0; i < 20; ++i)
    steps += std::string(i ? "," : "") + R"({"type": "Replace", "pattern": {"String": "a"}, "content": "aa"})";
  const std::string chain = R"({"type": "Sequence", "normalizers": [)" + steps + "]}";
  EXPECT_TRUE(ThrowsBadInput([&] { normalize(chain, "a"); },
                             {"tokenizer.json: field 'normalizer.normalizers': step 12 grew the text from 1 to 8192 bytes",
                              "the normalizer chain multiplies its input"}));
  EXPECT_EQ(normalize(chain, "b"), "b");  // texts it does not grow pass
}

TEST(TokenizerNormalizers, unknown_type_names_the_json_path_and_the_supported_types) {
  EXPECT_TRUE(ThrowsBadInput(
      [] {
        normalize(R"({"type": "Sequence", "normalizers": [{"type": "NFC"},
                                      {"type": "BertNormalizer"}]})",
                  "x");
      },
      {"tokenizer.json: normalizer.normalizers[1].type 'BertNormalizer' is not supported",
       "supported: NFC, NFD, NFKC, NFKD, Lowercase, Replace, Prepend, Strip, Sequence"}));
  EXPECT_TRUE(ThrowsBadInput([] { normalize(R"({"type": "Replace", "pattern": {"Glob": "*"}, "content": ""})", "x"); },
                             {"field 'normalizer.pattern' must be {\"String\": ...} or {\"Regex\": ...}"}));
  EXPECT_TRUE(ThrowsBadInput([] { normalize(R"({"kind": "NFC"})", "x"); },
                             {"field 'normalizer.type' must be a string naming the component"}));
}

}  // namespace
}  // namespace swarmt::tokenizer
