#include "swarmt/tokenizer/tokenizer_config.h"

#include <filesystem>

#include "swarmt/core/error.h"
#include "swarmt/core/json.h"

namespace swarmt::tokenizer {

namespace {

// A special token written as "<bos>", {"content": "<bos>", ...} or null.
std::optional<std::string> read_special_token(const JsonView& view, const std::string& key) {
  if (!view.has(key)) return std::nullopt;
  const Json& value = view.raw(key);
  if (value.is_string()) return value.get<std::string>();
  SWARMT_CHECK_INPUT(value.is_object(), view.describe(key), " must be a string or {\"content\": ...} (got ",
                     json_preview(value), ")");
  return view.object(key).get_string("content");
}

}  // namespace

TokenizerConfig TokenizerConfig::from_json(const std::string& json_text, const std::string& source) {
  Json json = parse_json(json_text, source);
  JsonView view(json, source);
  TokenizerConfig config;
  config.source = source;
  config.bos_token = read_special_token(view, "bos_token");
  config.eos_token = read_special_token(view, "eos_token");
  config.pad_token = read_special_token(view, "pad_token");
  config.unk_token = read_special_token(view, "unk_token");
  config.add_bos_token = view.get_bool("add_bos_token", false);
  config.add_eos_token = view.get_bool("add_eos_token", false);
  config.tokenizer_class = view.get_string("tokenizer_class", "");
  if (view.has("chat_template")) {
    const Json& chat = view.raw("chat_template");
    if (chat.is_string()) {
      config.chat_template = chat.get<std::string>();
    } else {
      SWARMT_CHECK_INPUT(chat.is_array(), view.describe("chat_template"),
                         " must be a string or a list of {\"name\", \"template\"} (got ", json_preview(chat), ")");
      for (size_t i = 0; i < chat.size(); ++i) {
        JsonView entry(chat[i], source, "chat_template[" + std::to_string(i) + "].");
        config.named_chat_templates[entry.get_string("name")] = entry.get_string("template");
      }
      auto it = config.named_chat_templates.find("default");
      if (it != config.named_chat_templates.end()) config.chat_template = it->second;
    }
  }
  return config;
}

TokenizerConfig TokenizerConfig::from_file(const std::string& path) { return from_json(read_text_file(path), path); }

TokenizerFiles load_tokenizer_dir(const std::string& dir) {
  namespace fs = std::filesystem;
  fs::path base(dir);
  SWARMT_CHECK_INPUT(fs::is_directory(base), dir, ": not a directory");
  fs::path tokenizer_path = base / "tokenizer.json";
  SWARMT_CHECK_INPUT(fs::exists(tokenizer_path), dir, ": no tokenizer.json in this directory");
  TokenizerFiles files{Tokenizer::from_file(tokenizer_path.string()), std::nullopt};
  fs::path config_path = base / "tokenizer_config.json";
  if (fs::exists(config_path)) files.config = TokenizerConfig::from_file(config_path.string());
  fs::path jinja_path = base / "chat_template.jinja";
  if (fs::exists(jinja_path)) {
    if (!files.config) {
      files.config = TokenizerConfig{};
      files.config->source = jinja_path.string();
    }
    if (files.config->chat_template.empty()) files.config->chat_template = read_text_file(jinja_path.string());
  }
  return files;
}

}  // namespace swarmt::tokenizer
