// `swarmt tokenize`, run as a subprocess on a model directory holding the byte tokenizer.
#include <gtest/gtest.h>

#include "swarmt/core/json.h"
#include "swarmt/tokenizer/byte_tokenizer.h"
#include "test_util.h"

namespace swarmt::tokenizer {
namespace {

using swarmt::testing::run_swarmt;
using swarmt::testing::TempDir;
using swarmt::testing::write_file;

// A model directory with the byte tokenizer and a ChatML chat template.
class TokenizeCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    write_file(dir_.file("tokenizer.json"), byte_tokenizer_json());
    Json config = Json::parse(byte_tokenizer_config_json());
    config["chat_template"] =
        "{% for m in messages %}{{'<|im_start|>' + m['role'] + '\\n' + m['content'] + '<|im_end|>\\n'}}{% endfor %}";
    write_file(dir_.file("tokenizer_config.json"), config.dump());
  }
  std::string model() const { return "--model " + dir_.path(); }
  TempDir dir_;
};

TEST_F(TokenizeCommand, prints_the_ids_as_a_json_array) {
  auto r = run_swarmt("tokenize " + model() + " --text 'Hi!'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "[72,105,33]\n");
}

TEST_F(TokenizeCommand, add_special_tokens_applies_the_post_processor) {
  auto r = run_swarmt("tokenize --tokenizer " + dir_.file("tokenizer.json") + " --text 'Hi' --add-special-tokens");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "[257,72,105]\n");
}

TEST_F(TokenizeCommand, tokens_flag_prints_the_token_strings) {
  auto r = run_swarmt("tokenize " + model() + " --text 'A<eos>' --tokens");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "[65,258]\n[\"<0x41>\",\"<eos>\"]\n");
}

TEST_F(TokenizeCommand, decode_prints_the_text) {
  auto r = run_swarmt("tokenize " + model() + " --decode '257, 72,105'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "<bos>Hi\n");
  r = run_swarmt("tokenize " + model() + " --decode 257,72,105 --skip-special-tokens");
  EXPECT_EQ(r.out, "Hi\n");
}

TEST_F(TokenizeCommand, chat_encodes_one_user_turn_with_the_generation_prompt) {
  auto r = run_swarmt("tokenize " + model() + " --text 'Hi' --chat");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<int32_t> expected;
  for (unsigned char c : std::string("<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n")) expected.push_back(c);
  EXPECT_EQ(r.out, Json(expected).dump() + "\n");
}

TEST_F(TokenizeCommand, bad_arguments_exit_2_with_a_message) {
  auto r = run_swarmt("tokenize " + model() + " --decode 1,x");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--decode: 'x' is not a token id"), std::string::npos) << r.err;
  r = run_swarmt("tokenize " + model() + " --decode 999");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("token id 999 is not in the vocabulary"), std::string::npos) << r.err;
  r = run_swarmt("tokenize " + model());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("give exactly one of --text, --text-file or --decode"), std::string::npos) << r.err;
  r = run_swarmt("tokenize " + model() + " --text x --chat --add-special-tokens");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("double <bos>"), std::string::npos) << r.err;
}

TEST_F(TokenizeCommand, malformed_tokenizer_or_missing_template_exit_2) {
  write_file(dir_.file("tokenizer_config.json"), byte_tokenizer_config_json());  // no chat template
  auto r = run_swarmt("tokenize " + model() + " --text x --chat");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("no chat_template"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--no-chat"), std::string::npos) << r.err;
  write_file(dir_.file("tokenizer.json"), "{\"model\": {\"type\": \"WordPiece\"}}");
  r = run_swarmt("tokenize " + model() + " --text x");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("model.type 'WordPiece' is not supported (supported: BPE)"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace swarmt::tokenizer
