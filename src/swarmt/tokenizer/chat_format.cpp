#include "swarmt/tokenizer/chat_format.h"

#include <algorithm>

#include "swarmt/core/error.h"
#include "swarmt/tokenizer/unicode.h"
#include "swarmt/tokenizer/utf8.h"

namespace swarmt::tokenizer {

namespace {

constexpr const char* kImStart = "<|im_start|>";
constexpr const char* kImEnd = "<|im_end|>";
constexpr const char* kStartOfTurn = "<start_of_turn>";
constexpr const char* kEndOfTurn = "<end_of_turn>";

// Jinja's `trim` is Python's str.strip(): Unicode whitespace plus the separators U+001C..U+001F.
bool is_python_space(char32_t c) { return is_unicode_whitespace(c) || (c >= 0x1C && c <= 0x1F); }

std::string python_strip(const std::string& text) {
  size_t begin = 0, end = text.size();
  while (begin < end) {
    size_t next = begin;
    if (!is_python_space(next_code_point(text, next))) break;
    begin = next;
  }
  while (end > begin) {
    size_t start = end - 1;
    while (start > begin && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) --start;
    size_t next = start;
    if (!is_python_space(next_code_point(text, next))) break;
    end = start;
  }
  return text.substr(begin, end - begin);
}

// The default system prompt a ChatML template writes literally, as SmolLM2's does:
//   {{ '<|im_start|>system\nYou are a helpful AI assistant named SmolLM, ...<|im_end|>\n' }}
// i.e. "<|im_start|>system", a newline (real, or "\n" escaped inside the Jinja string), then text up to
// "<|im_end|>" that stays inside the same string literal (no quote, brace or '+'). Templates that only
// ever copy messages[0].content (Qwen) have no such literal.
std::optional<std::string> find_default_system_prompt(const std::string& chat_template) {
  const std::string marker = std::string(kImStart) + "system";
  size_t pos = 0;
  while ((pos = chat_template.find(marker, pos)) != std::string::npos) {
    size_t text_start = pos + marker.size();
    if (chat_template.compare(text_start, 1, "\n") == 0) {
      text_start += 1;
    } else if (chat_template.compare(text_start, 2, "\\n") == 0) {
      text_start += 2;
    } else {
      pos = text_start;
      continue;
    }
    size_t text_end = chat_template.find(kImEnd, text_start);
    if (text_end == std::string::npos) return std::nullopt;
    std::string prompt = chat_template.substr(text_start, text_end - text_start);
    bool literal = prompt.find_first_of("'\"{}+") == std::string::npos;
    if (literal && !prompt.empty()) return prompt;
    pos = text_start;
  }
  return std::nullopt;
}

[[noreturn]] void throw_no_chat(const std::string& source, const std::string& problem) {
  throw_input_error(source.empty() ? std::string("tokenizer_config.json") : source, ": ", problem,
                    "; pass --no-chat to use the text as it is");
}

}  // namespace

ChatFormat ChatFormat::chatml(std::optional<std::string> default_system_prompt, std::string end_of_sequence) {
  ChatFormat format;
  format.style_ = ChatStyle::ChatML;
  format.default_system_prompt_ = std::move(default_system_prompt);
  format.stop_strings_ = {kImEnd};
  if (!end_of_sequence.empty() && end_of_sequence != kImEnd) format.stop_strings_.push_back(end_of_sequence);
  return format;
}

ChatFormat ChatFormat::gemma(std::string bos_token) {
  ChatFormat format;
  format.style_ = ChatStyle::Gemma;
  format.bos_token_ = std::move(bos_token);
  format.stop_strings_ = {kEndOfTurn, "<eos>"};
  return format;
}

ChatFormat ChatFormat::from_config(const TokenizerConfig& config) {
  const std::string& chat_template = config.chat_template;
  if (chat_template.empty()) throw_no_chat(config.source, "no chat_template, so this model has no chat format");
  if (chat_template.find(kStartOfTurn) != std::string::npos) return gemma(config.bos_token.value_or("<bos>"));
  if (chat_template.find(kImStart) != std::string::npos) {
    return chatml(find_default_system_prompt(chat_template), config.eos_token.value_or(""));
  }
  throw_no_chat(config.source,
                "the chat_template is not one swarmt renders without a template engine (supported: ChatML as in "
                "SmolLM2 and Qwen, Gemma)");
}

std::string ChatFormat::render(const std::vector<ChatMessage>& messages, bool add_generation_prompt) const {
  SWARMT_CHECK_INPUT(!messages.empty(), "chat: the conversation has no messages");
  std::string out;
  if (style_ == ChatStyle::ChatML) {
    if (messages.front().role != "system" && default_system_prompt_) {
      out += std::string(kImStart) + "system\n" + *default_system_prompt_ + kImEnd + "\n";
    }
    for (const ChatMessage& message : messages) out += kImStart + message.role + "\n" + message.content + kImEnd + "\n";
    if (add_generation_prompt) out += std::string(kImStart) + "assistant\n";
    return out;
  }
  // Gemma 3's template.
  out = bos_token_;
  std::string first_user_prefix;
  size_t first = 0;
  if (messages.front().role == "system") {
    first_user_prefix = messages.front().content + "\n\n";
    first = 1;
  }
  for (size_t i = first; i < messages.size(); ++i) {
    const ChatMessage& message = messages[i];
    bool expect_user = (i - first) % 2 == 0;
    SWARMT_CHECK_INPUT((message.role == "user") == expect_user, "chat: message ", i, " has role '", message.role,
                       "', but Gemma's conversation roles must alternate user/assistant/user/assistant/...");
    std::string role = message.role == "assistant" ? "model" : message.role;
    out += kStartOfTurn + role + "\n" + (i == first ? first_user_prefix : "") + python_strip(message.content) +
           kEndOfTurn + "\n";
  }
  if (add_generation_prompt) out += std::string(kStartOfTurn) + "model\n";
  return out;
}

std::string ChatFormat::render_continuation(const std::vector<ChatMessage>& messages) const {
  SWARMT_CHECK_INPUT(!messages.empty(), "chat: no new messages to continue the conversation with");
  if (style_ == ChatStyle::ChatML) {
    std::string out = std::string(kImEnd) + "\n";
    for (const ChatMessage& message : messages) out += kImStart + message.role + "\n" + message.content + kImEnd + "\n";
    return out + kImStart + "assistant\n";
  }
  std::string out = std::string(kEndOfTurn) + "\n";
  for (size_t i = 0; i < messages.size(); ++i) {
    const ChatMessage& message = messages[i];
    const bool expect_user = i % 2 == 0;
    SWARMT_CHECK_INPUT((message.role == "user") == expect_user && (expect_user || message.role == "assistant"),
                       "chat: new message ", i, " has role '", message.role, "', but Gemma's conversation continues "
                       "with user/assistant/user/... after the model's reply");
    const std::string role = message.role == "assistant" ? "model" : message.role;
    out += kStartOfTurn + role + "\n" + python_strip(message.content) + kEndOfTurn + "\n";
  }
  return out + kStartOfTurn + "model\n";
}

std::vector<int32_t> ChatFormat::encode(const Tokenizer& tokenizer, const std::vector<ChatMessage>& messages,
                                        bool add_generation_prompt) const {
  return tokenizer.encode(render(messages, add_generation_prompt), /*add_special_tokens=*/false);
}

std::vector<int32_t> ChatFormat::stop_ids(const Tokenizer& tokenizer) const {
  std::vector<int32_t> ids;
  for (const std::string& stop : stop_strings_) {
    if (auto id = tokenizer.token_to_id(stop)) {
      if (std::find(ids.begin(), ids.end(), *id) == ids.end()) ids.push_back(*id);
    }
  }
  return ids;
}

std::string ChatFormat::name() const { return style_ == ChatStyle::Gemma ? "gemma" : "chatml"; }

}  // namespace swarmt::tokenizer
