#include "swarmt/tokenizer/decoder.h"

#include <gtest/gtest.h>

#include "swarmt/tokenizer/utf8.h"
#include "tokenizer/tokenizer_test_util.h"

namespace swarmt::tokenizer {
namespace {

using test_support::ThrowsBadInput;

std::string decode_with(const std::string& json_text, std::vector<std::string> tokens) {
  make_decoder(Json::parse(json_text), {"tokenizer.json", "decoder"})->decode_chain(tokens);
  std::string text;
  for (const auto& token : tokens) text += token;
  return text;
}

const std::string kGemmaDecoder = R"({"type": "Sequence", "decoders": [
    {"type": "Replace", "pattern": {"String": "▁"}, "content": " "}, {"type": "ByteFallback"}, {"type": "Fuse"}]})";

TEST(TokenizerDecoders, byte_fallback_runs_become_utf8_and_invalid_runs_one_replacement_per_byte) {
  const std::string f(kReplacementChar);
  EXPECT_EQ(decode_with(kGemmaDecoder, {"▁na", "<0xC3>", "<0xAF>", "ve", "▁", "<0xF0>", "<0x9F>", "<0xA6>", "<0x99>"}),
            " naïve 🦙");
  // An incomplete run (3 of 4 bytes of 🦙) gives one U+FFFD per byte, as HF's ByteFallback does.
  EXPECT_EQ(decode_with(kGemmaDecoder, {"<0xF0>", "<0x9F>", "<0xA6>", "x"}), f + f + f + "x");
  EXPECT_EQ(decode_with(R"({"type": "ByteFallback"})", {"<0x4a>", "<0xZZ>"}), "J<0xZZ>");  // lower-case hex is fine
}

TEST(TokenizerDecoders, byte_level_maps_the_alphabet_back_to_bytes) {
  EXPECT_EQ(decode_with(R"({"type": "ByteLevel"})", {"Hello", "\xC4\xA0world", "\xC4\x8A"}), "Hello world\n");
  // Half of é (C3) then nothing: lossy UTF-8 gives one U+FFFD.
  EXPECT_EQ(decode_with(R"({"type": "ByteLevel"})", {"a", "\xC3\x83"}), "a" + std::string(kReplacementChar));
  // A token outside the alphabet (an added token with a space) keeps its bytes.
  EXPECT_EQ(decode_with(R"({"type": "ByteLevel"})", {"<x y>", "\xC4\xA0z"}), "<x y> z");
}

TEST(TokenizerDecoders, metaspace_drops_the_replacement_of_the_first_token_only) {
  const std::string always = R"({"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always"})";
  EXPECT_EQ(decode_with(always, {"▁Hey", "▁friend!"}), "Hey friend!");
  EXPECT_EQ(decode_with(R"({"type": "Metaspace", "replacement": "▁", "prepend_scheme": "never"})", {"▁Hey", "▁you"}),
            " Hey you");
}

TEST(TokenizerDecoders, strip_and_replace_work_per_token) {
  EXPECT_EQ(decode_with(R"({"type": "Strip", "content": " ", "start": 1, "stop": 0})", {"  a", " b"}), " ab");
  EXPECT_EQ(decode_with(R"({"type": "Strip", "content": "x", "start": 0, "stop": 2})", {"axxx", "x"}), "ax");
  EXPECT_EQ(decode_with(R"({"type": "Replace", "pattern": {"Regex": "[0-9]+"}, "content": "#"})", {"a12", "3b"}),
            "a##b");
}

TEST(TokenizerDecoders, a_chain_that_multiplies_its_input_is_refused) {
  // 20 steps "a" -> "aa" would turn each one-byte token into a megabyte, as in the normalizer chain.
  std::string steps;
  for (int i = 0; i < 20; ++i)
    steps += std::string(i ? "," : "") + R"({"type": "Replace", "pattern": {"String": "a"}, "content": "aa"})";
  const std::string chain = R"({"type": "Sequence", "decoders": [)" + steps + "]}";
  EXPECT_TRUE(ThrowsBadInput([&] { decode_with(chain, {"a", "b"}); },
                             {"tokenizer.json: field 'decoder.decoders': step 12 grew the text from 2 to 8193 bytes",
                              "the decoder chain multiplies its input"}));
  EXPECT_EQ(decode_with(chain, {"b", "c"}), "bc");  // texts it does not grow pass
}

TEST(TokenizerDecoders, unknown_decoder_is_rejected_with_its_path) {
  EXPECT_TRUE(ThrowsBadInput([] { decode_with(R"({"type": "Sequence", "decoders": [{"type": "WordPiece"}]})", {}); },
                             {"tokenizer.json: decoder.decoders[0].type 'WordPiece' is not supported",
                              "ByteLevel, ByteFallback, Fuse, Replace, Strip, Metaspace, Sequence"}));
}

}  // namespace
}  // namespace swarmt::tokenizer
