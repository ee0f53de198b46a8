#include "swarmt/tokenizer/stream_decoder.h"

#include <gtest/gtest.h>

#include "swarmt/tokenizer/byte_tokenizer.h"
#include "swarmt/tokenizer/utf8.h"
#include "test_util.h"
#include "tokenizer/tokenizer_test_util.h"

namespace swarmt::tokenizer {
namespace {

using test_support::load;
using test_support::toy_tokenizer_json;

// Streams `ids` one by one and returns what each push printed.
std::vector<std::string> stream(StreamDecoder& decoder, const std::vector<int32_t>& ids) {
  std::vector<std::string> pieces;
  for (int32_t id : ids) pieces.push_back(decoder.push(id));
  return pieces;
}

std::string joined(const std::vector<std::string>& pieces) {
  std::string text;
  for (const auto& piece : pieces) text += piece;
  return text;
}

TEST(TokenizerStreamDecoder, holds_back_a_character_until_its_last_byte) {
  Tokenizer tok = Tokenizer::from_json(byte_tokenizer_json(), "byte tokenizer");
  StreamDecoder decoder(tok);
  auto pieces = stream(decoder, tok.encode("a🦙b", false));  // a, F0 9F A6 99, b
  EXPECT_EQ(pieces, (std::vector<std::string>{"a", "", "", "", "🦙", "b"}));
  EXPECT_EQ(decoder.flush(), "");
}

TEST(TokenizerStreamDecoder, flush_releases_an_unfinished_character_as_replacement) {
  Tokenizer tok = Tokenizer::from_json(byte_tokenizer_json(), "byte tokenizer");
  StreamDecoder decoder(tok);
  EXPECT_EQ(decoder.push('x'), "x");
  EXPECT_EQ(decoder.push(0xF0), "");
  EXPECT_EQ(decoder.push(0x9F), "");
  EXPECT_EQ(decoder.flush(), std::string(kReplacementChar) + std::string(kReplacementChar));
  EXPECT_EQ(decoder.push('y'), "y");  // flush also reset the state
}

TEST(TokenizerStreamDecoder, special_tokens_are_skipped_by_default) {
  Tokenizer tok = Tokenizer::from_json(byte_tokenizer_json(), "byte tokenizer");
  StreamDecoder quiet(tok);
  EXPECT_EQ(joined(stream(quiet, {kByteTokenizerBosId, 'h', 'i', kByteTokenizerEosId})), "hi");
  StreamDecoder verbose(tok, /*skip_special_tokens=*/false);
  EXPECT_EQ(joined(stream(verbose, {kByteTokenizerBosId, 'h', 'i'})), "<bos>hi");
}

TEST(TokenizerStreamDecoder, metaspace_spaces_come_out_right_token_by_token) {
  // Metaspace drops the replacement of the *first* token only; streaming must not treat every token as
  // the first one.
  Json doc = toy_tokenizer_json({"▁Hey", "▁friend", "!"}, {});
  doc["decoder"] = Json::parse(R"({"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always"})");
  Tokenizer tok = load(doc);
  StreamDecoder decoder(tok);
  EXPECT_EQ(stream(decoder, {0, 1, 2}), (std::vector<std::string>{"Hey", " friend", "!"}));
}

TEST(TokenizerStreamDecoder, streamed_text_equals_full_decode_for_every_test_string) {
  Tokenizer tok = Tokenizer::from_json(byte_tokenizer_json(), "byte tokenizer");
  Json strings = read_json_file(swarmt::testing::test_data("tokenizer_strings.json"))["strings"];
  StreamDecoder decoder(tok);
  for (const auto& s : strings) {
    std::string text = s.get<std::string>();
    std::vector<int32_t> ids = tok.encode(text, false);
    std::string streamed = joined(stream(decoder, ids)) + decoder.flush();
    EXPECT_EQ(streamed, tok.decode(ids, true)) << Json(text).dump();
  }
}

}  // namespace
}  // namespace swarmt::tokenizer
