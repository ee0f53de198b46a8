// Chat formats, rendered without a Jinja engine.
//
// swarmt recognises the family of a model's chat_template (tokenizer_config.json) and renders it in C++:
//   ChatML (SmolLM2, Qwen)  <|im_start|>{role}\n{content}<|im_end|>\n per message; generation prompt
//                           <|im_start|>assistant\n. If the template writes a default system prompt
//                           when the first message is not a system one (SmolLM2: "You are a helpful AI
//                           assistant named SmolLM, trained by Hugging Face"), that prompt is taken
//                           from the template text and used the same way. Stops on <|im_end|>.
//   Gemma                   <bos> first; a leading system message is not a turn but its content + "\n\n"
//                           is prefixed to the first user turn; roles must alternate user/assistant;
//                           assistant is called "model"; each turn is
//                           <start_of_turn>{role}\n{content|trim}<end_of_turn>\n; generation prompt
//                           <start_of_turn>model\n. Stops on <end_of_turn> and <eos>.
// Anything else is rejected with a message suggesting --no-chat (raw text).
//
// Double-BOS pitfall: the Gemma rendering already starts with <bos>; encoding it with
// add_special_tokens=true would add a second one. encode() always uses add_special_tokens=false.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "swarmt/tokenizer/tokenizer.h"
#include "swarmt/tokenizer/tokenizer_config.h"

namespace swarmt::tokenizer {

struct ChatMessage {
  std::string role;  // "system", "user", "assistant" (others are passed through as written)
  std::string content;
};

enum class ChatStyle { ChatML, Gemma };

class ChatFormat {
 public:
  // Picks the format from config.chat_template; BadInput if there is none or it is not recognised.
  static ChatFormat from_config(const TokenizerConfig& config);
  static ChatFormat chatml(std::optional<std::string> default_system_prompt, std::string end_of_sequence = "");
  static ChatFormat gemma(std::string bos_token = "<bos>");

  // The prompt text for `messages`; with add_generation_prompt it ends where the assistant's reply
  // starts. BadInput for an empty conversation or (Gemma) roles that do not alternate.
  std::string render(const std::vector<ChatMessage>& messages, bool add_generation_prompt) const;
  // What continues a conversation after the assistant's reply (generated, so left open: its end of turn
  // was a stop string, never fed): the end of that turn, then `messages` as new turns (no BOS, no
  // default system prompt; Gemma: user first, then alternating, no system message), then the generation
  // prompt. A server session that holds the conversation so far reads only this.
  std::string render_continuation(const std::vector<ChatMessage>& messages) const;
  // render() tokenized without the post-processor (no second <bos>).
  std::vector<int32_t> encode(const Tokenizer& tokenizer, const std::vector<ChatMessage>& messages,
                              bool add_generation_prompt) const;

  // Strings that end the assistant's turn, and the ids of those that are single tokens of `tokenizer`.
  const std::vector<std::string>& stop_strings() const { return stop_strings_; }
  std::vector<int32_t> stop_ids(const Tokenizer& tokenizer) const;

  ChatStyle style() const { return style_; }
  std::string name() const;
  const std::optional<std::string>& default_system_prompt() const { return default_system_prompt_; }

 private:
  ChatStyle style_ = ChatStyle::ChatML;
  std::optional<std::string> default_system_prompt_;  // ChatML only
  std::string bos_token_;                             // Gemma only
  std::vector<std::string> stop_strings_;
};

}  // namespace swarmt::tokenizer
