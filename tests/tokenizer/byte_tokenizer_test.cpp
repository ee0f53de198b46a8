#include "swarmt/tokenizer/byte_tokenizer.h"

#include <gtest/gtest.h>

#include <random>

#include "swarmt/core/json.h"
#include "swarmt/tokenizer/tokenizer_config.h"
#include "swarmt/tokenizer/utf8.h"
#include "test_util.h"

namespace swarmt::tokenizer {
namespace {

using Ids = std::vector<int32_t>;

Tokenizer byte_tokenizer() { return Tokenizer::from_json(byte_tokenizer_json(), "byte tokenizer"); }

// A random valid UTF-8 string mixing 1- to 4-byte characters.
std::string random_utf8(std::mt19937& rng, size_t length) {
  std::string text;
  for (size_t i = 0; i < length; ++i) {
    char32_t cp;
    switch (rng() % 4) {
      case 0:
        cp = rng() % 0x80;
        break;
      case 1:
        cp = 0x80 + rng() % (0x800 - 0x80);
        break;
      case 2:
        cp = 0x800 + rng() % (0x10000 - 0x800);
        break;
      default:
        cp = 0x10000 + rng() % (0x110000 - 0x10000);
        break;
    }
    if (cp >= 0xD800 && cp <= 0xDFFF) cp = 'x';  // surrogates are not characters
    append_utf8(cp, text);
  }
  return text;
}

TEST(TokenizerByteTokenizer, vocabulary_is_256_bytes_plus_three_specials) {
  Tokenizer tok = byte_tokenizer();
  EXPECT_EQ(tok.vocab_size(), kByteTokenizerVocabSize);
  EXPECT_EQ(tok.token_to_id("<0x00>"), 0);
  EXPECT_EQ(tok.token_to_id("<0xFF>"), 255);
  EXPECT_EQ(tok.token_to_id("<pad>"), kByteTokenizerPadId);
  EXPECT_EQ(tok.token_to_id("<bos>"), kByteTokenizerBosId);
  EXPECT_EQ(tok.token_to_id("<eos>"), kByteTokenizerEosId);
  EXPECT_TRUE(tok.is_special(kByteTokenizerEosId));
  EXPECT_FALSE(tok.is_special(65));
}

TEST(TokenizerByteTokenizer, every_byte_is_its_own_id) {
  Tokenizer tok = byte_tokenizer();
  EXPECT_EQ(tok.encode("A", false), (Ids{65}));
  EXPECT_EQ(tok.encode("é🦙", false), (Ids{0xC3, 0xA9, 0xF0, 0x9F, 0xA6, 0x99}));
  EXPECT_EQ(tok.encode(std::string("a\0b", 3), false), (Ids{97, 0, 98}));
  EXPECT_EQ(tok.encode("<0x41>", false), (Ids{'<', '0', 'x', '4', '1', '>'}));  // no merges, ever
  EXPECT_EQ(tok.encode("", false), (Ids{}));
}

TEST(TokenizerByteTokenizer, add_special_tokens_prepends_bos_and_decode_can_skip_it) {
  Tokenizer tok = byte_tokenizer();
  Ids ids = tok.encode("hi", true);
  EXPECT_EQ(ids, (Ids{kByteTokenizerBosId, 'h', 'i'}));
  EXPECT_EQ(tok.decode(ids, /*skip_special_tokens=*/true), "hi");
  EXPECT_EQ(tok.decode(ids, /*skip_special_tokens=*/false), "<bos>hi");
  EXPECT_EQ(tok.encode("x<eos>", false), (Ids{'x', kByteTokenizerEosId}));
}

TEST(TokenizerByteTokenizer, any_utf8_text_round_trips_exactly) {
  Tokenizer tok = byte_tokenizer();
  std::mt19937 rng(11);
  for (int trial = 0; trial < 200; ++trial) {
    std::string text = random_utf8(rng, rng() % 64);
    Ids ids = tok.encode(text, false);
    ASSERT_EQ(ids.size(), text.size());
    ASSERT_EQ(tok.decode(ids, false), text);
  }
  // And every string of the golden test inputs.
  Json strings = read_json_file(swarmt::testing::test_data("tokenizer_strings.json"))["strings"];
  ASSERT_GE(strings.size(), 200u);
  for (const auto& s : strings) {
    std::string text = s.get<std::string>();
    EXPECT_EQ(tok.decode(tok.encode(text, false), false), text) << Json(text).dump();
  }
}

TEST(TokenizerByteTokenizer, config_names_the_special_tokens) {
  TokenizerConfig config = TokenizerConfig::from_json(byte_tokenizer_config_json(), "tokenizer_config.json");
  EXPECT_EQ(config.bos_token, "<bos>");
  EXPECT_EQ(config.eos_token, "<eos>");
  EXPECT_EQ(config.pad_token, "<pad>");
  EXPECT_FALSE(config.unk_token.has_value());
  EXPECT_TRUE(config.add_bos_token);
  EXPECT_TRUE(config.chat_template.empty());
}

TEST(TokenizerByteTokenizer, a_model_directory_with_it_loads) {
  swarmt::testing::TempDir dir;
  swarmt::testing::write_file(dir.file("tokenizer.json"), byte_tokenizer_json());
  swarmt::testing::write_file(dir.file("tokenizer_config.json"), byte_tokenizer_config_json());
  TokenizerFiles files = load_tokenizer_dir(dir.path());
  ASSERT_TRUE(files.config.has_value());
  EXPECT_EQ(files.config->eos_token, "<eos>");
  EXPECT_EQ(files.tokenizer.encode("ok", true), (Ids{kByteTokenizerBosId, 'o', 'k'}));
}

}  // namespace
}  // namespace swarmt::tokenizer
