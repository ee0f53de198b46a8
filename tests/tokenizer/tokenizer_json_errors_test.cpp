// Malformed tokenizer.json files: each is rejected with BadInput naming the file, the field and the
// problem, never a crash.
#include <gtest/gtest.h>

#include "test_util.h"
#include "tokenizer/tokenizer_test_util.h"

namespace swarmt::tokenizer {
namespace {

using test_support::load;
using test_support::ThrowsBadInput;
using test_support::toy_tokenizer_json;

Json valid() { return toy_tokenizer_json({"a", "b", "ab"}, {{"a", "b"}}); }

void load_text(const std::string& text) { Tokenizer::from_json(text, "tokenizer.json"); }

TEST(TokenizerJsonErrors, truncated_json_reports_the_position) {
  std::string text = valid().dump();
  EXPECT_TRUE(ThrowsBadInput([&] { load_text(text.substr(0, text.size() / 2)); },
                             {"tokenizer.json: not valid JSON", "parse error"}));
  EXPECT_TRUE(ThrowsBadInput([] { load_text("[1, 2]"); }, {"tokenizer.json: the document must be a JSON object"}));
}

TEST(TokenizerJsonErrors, unknown_model_type_lists_the_supported_one) {
  Json doc = valid();
  doc["model"]["type"] = "Unigram";
  EXPECT_TRUE(
      ThrowsBadInput([&] { load(doc); }, {"tokenizer.json: model.type 'Unigram' is not supported (supported: BPE)"}));
}

TEST(TokenizerJsonErrors, unknown_component_types_name_their_json_path) {
  Json doc = valid();
  doc["normalizer"] = Json::parse(R"({"type": "Foo"})");
  EXPECT_TRUE(
      ThrowsBadInput([&] { load(doc); }, {"tokenizer.json: normalizer.type 'Foo' is not supported (supported: NFC"}));
  doc = valid();
  doc["post_processor"] =
      Json::parse(R"({"type": "Sequence", "processors": [{"type": "ByteLevel"}, {"type": "Bar"}]})");
  EXPECT_TRUE(ThrowsBadInput([&] { load(doc); }, {"post_processor.processors[1].type 'Bar' is not supported"}));
}

TEST(TokenizerJsonErrors, vocab_ids_must_be_non_negative_integers) {
  EXPECT_TRUE(ThrowsBadInput(
      [] { load_text(R"({"model": {"type": "BPE", "vocab": {"a": "0"}, "merges": []}})"); },
      {"tokenizer.json: model.vocab: the id of token \"a\" must be a non-negative integer (got \"0\")"}));
  EXPECT_TRUE(ThrowsBadInput([] { load_text(R"({"model": {"type": "BPE", "vocab": {"a": -3}, "merges": []}})"); },
                             {"model.vocab: the id of token \"a\" must be a non-negative integer (got -3)"}));
  EXPECT_TRUE(ThrowsBadInput([] { load_text(R"({"model": {"type": "BPE", "vocab": {"a": 1.5}, "merges": []}})"); },
                             {"model.vocab: the id of token \"a\" must be a non-negative integer (got 1.5)"}));
  EXPECT_TRUE(
      ThrowsBadInput([] { load_text(R"({"model": {"type": "BPE", "vocab": {"a": 4000000000}, "merges": []}})"); },
                     {"model.vocab: token \"a\" has id 4000000000, outside [0, 16777215]"}));
  EXPECT_TRUE(ThrowsBadInput([] { load_text(R"({"model": {"type": "BPE", "vocab": [["a", 0.0]], "merges": []}})"); },
                             {"field 'model.vocab' must be an object mapping each token to its id"}));
}

TEST(TokenizerJsonErrors, duplicate_ids_and_duplicate_tokens_are_rejected) {
  EXPECT_TRUE(
      ThrowsBadInput([] { load_text(R"({"model": {"type": "BPE", "vocab": {"a": 0, "b": 0}, "merges": []}})"); },
                     {"model.vocab: id 0 is given to two tokens, \"a\" and \"b\""}));
  EXPECT_TRUE(
      ThrowsBadInput([] { load_text(R"({"model": {"type": "BPE", "vocab": {"a": 0, "a": 1}, "merges": []}})"); },
                     {"model.vocab: token \"a\" is listed twice (ids 0 and 1)"}));
}

TEST(TokenizerJsonErrors, merges_must_name_vocabulary_tokens) {
  Json doc = valid();
  doc["model"]["merges"] = Json::array({Json::array({"a", "b"}), Json::array({"ab", "c"})});
  EXPECT_TRUE(ThrowsBadInput(
      [&] { load(doc); },
      {"tokenizer.json: model.merges[1] (\"ab\", \"c\") uses token \"c\", which is not in model.vocab"}));
  doc["model"]["vocab"]["c"] = 3;  // now "abc", the merge result, is the missing one
  EXPECT_TRUE(ThrowsBadInput([&] { load(doc); }, {"model.merges[1]", "uses token \"abc\""}));
}

TEST(TokenizerJsonErrors, merges_must_be_pairs_or_two_word_strings) {
  Json doc = valid();
  doc["model"]["merges"] = Json::array({Json::array({"a", "b", "c"})});
  EXPECT_TRUE(ThrowsBadInput([&] { load(doc); }, {"model.merges[0] must be a pair of tokens", "(got 3 strings)"}));
  doc["model"]["merges"] = Json::array({"a b", "ab"});
  EXPECT_TRUE(ThrowsBadInput([&] { load(doc); }, {"model.merges[1] must be a pair of tokens", "(got \"ab\")"}));
  doc["model"]["merges"] = Json::array({7});
  EXPECT_TRUE(ThrowsBadInput([&] { load(doc); }, {"model.merges[0] must be a pair of tokens", "(got 7)"}));
  doc["model"].erase("merges");
  EXPECT_TRUE(ThrowsBadInput([&] { load(doc); }, {"field 'model.merges' is missing"}));
}

TEST(TokenizerJsonErrors, added_tokens_must_agree_with_the_vocabulary) {
  Json doc = valid();
  doc["added_tokens"] = Json::parse(R"([{"id": 1, "content": "<s>", "special": true}])");
  EXPECT_TRUE(
      ThrowsBadInput([&] { load(doc); }, {"field 'added_tokens[0].id' = 1 is already model.vocab's id of \"b\""}));
  doc["added_tokens"] = Json::parse(R"([{"id": 7, "content": "ab"}])");
  EXPECT_TRUE(ThrowsBadInput([&] { load(doc); }, {"field 'added_tokens[0].id' = 7 but model.vocab gives \"ab\" id 2"}));
  doc["added_tokens"] = Json::parse(R"([{"id": 5, "content": "<s>"}, {"id": 5, "content": "</s>"}])");
  EXPECT_TRUE(
      ThrowsBadInput([&] { load(doc); }, {"field 'added_tokens[1].id' = 5 is already used by added_tokens[0]"}));
  doc["added_tokens"] = Json::parse(R"([{"id": -1, "content": "<s>"}])");
  EXPECT_TRUE(ThrowsBadInput([&] { load(doc); }, {"field 'added_tokens[0].id' must be in [0, 16777215] (got -1)"}));
  doc["added_tokens"] = Json::parse(R"([{"id": 5, "content": ""}])");
  EXPECT_TRUE(ThrowsBadInput([&] { load(doc); }, {"field 'added_tokens[0].content' must not be empty"}));
}

TEST(TokenizerJsonErrors, post_processor_ids_and_names_are_checked) {
  Json doc = valid();
  doc["post_processor"] = Json::parse(R"({"type": "TemplateProcessing",
      "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
      "special_tokens": {"<s>": {"id": "<s>", "ids": [99], "tokens": ["<s>"]}}})");
  EXPECT_TRUE(
      ThrowsBadInput([&] { load(doc); },
                     {"field 'post_processor.special_tokens.<s>.ids'[0] = 99 is out of range (vocabulary size 3)"}));
  doc["post_processor"]["special_tokens"]["<s>"]["ids"] = Json::array({0});
  doc["post_processor"]["single"][0]["SpecialToken"]["id"] = "<bos>";
  EXPECT_TRUE(ThrowsBadInput([&] { load(doc); }, {"special token \"<bos>\" is not defined in special_tokens"}));
}

TEST(TokenizerJsonErrors, wrong_field_types_and_unknown_unk_token) {
  Json doc = valid();
  doc["model"]["byte_fallback"] = "yes";
  EXPECT_TRUE(ThrowsBadInput([&] { load(doc); },
                             {"tokenizer.json: field 'model.byte_fallback' must be true or false (got \"yes\")"}));
  doc = valid();
  doc["model"]["unk_token"] = "<unk>";
  EXPECT_TRUE(ThrowsBadInput([&] { load(doc); }, {"tokenizer.json: model.unk_token \"<unk>\" is not in model.vocab"}));
  doc = valid();
  doc["pre_tokenizer"] = Json::parse(R"({"type": "Split", "pattern": {"Regex": "[a-"}, "behavior": "Isolated"})");
  EXPECT_TRUE(ThrowsBadInput([&] { load(doc); }, {"field 'pre_tokenizer.pattern.Regex': invalid regular expression"}));
}

TEST(TokenizerJsonErrors, missing_file_and_bad_inputs_to_encode_and_decode) {
  EXPECT_TRUE(ThrowsBadInput([] { Tokenizer::from_file("/nonexistent/tokenizer.json"); },
                             {"/nonexistent/tokenizer.json: cannot open file for reading"}));
  Tokenizer tok = load(valid());
  EXPECT_TRUE(ThrowsBadInput([&] { tok.encode("ab\xC3", false); }, {"text to encode is not valid UTF-8", "offset 2"}));
  EXPECT_TRUE(ThrowsBadInput(
      [&] {
        tok.decode({0, 17}, false);
      },
      {"token id 17 is not in the vocabulary of tokenizer.json (size 3)"}));
  EXPECT_TRUE(ThrowsBadInput([&] { tok.id_to_token(-1); }, {"token id -1 is not in the vocabulary"}));
}

TEST(TokenizerJsonErrors, a_file_on_disk_is_named_in_the_message) {
  swarmt::testing::TempDir dir;
  swarmt::testing::write_file(dir.file("tokenizer.json"),
                              R"({"model": {"type": "BPE", "vocab": {}, "merges": [["x", "y"]]}})");
  EXPECT_TRUE(ThrowsBadInput([&] { Tokenizer::from_file(dir.file("tokenizer.json")); },
                             {dir.file("tokenizer.json") + ": model.merges[0]"}));
}

}  // namespace
}  // namespace swarmt::tokenizer
