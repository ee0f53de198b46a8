// tokenizer_config.json (the transformers side of a tokenizer) and loading a model directory's
// tokenizer.
//
// The fields swarmt uses: the special token strings (written as "<bos>" or as {"content": "<bos>",
// ...}), add_bos_token / add_eos_token, and the chat template (a string, or a list of {name, template}
// of which "default" is used). Newer transformers write the template to chat_template.jinja beside the
// config instead; load_tokenizer_dir reads that too.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "swarmt/tokenizer/tokenizer.h"

namespace swarmt::tokenizer {

struct TokenizerConfig {
  std::string source;  // file it was read from
  std::optional<std::string> bos_token;
  std::optional<std::string> eos_token;
  std::optional<std::string> pad_token;
  std::optional<std::string> unk_token;
  bool add_bos_token = false;
  bool add_eos_token = false;
  std::string tokenizer_class;                              // e.g. "GemmaTokenizer"; "" if absent
  std::string chat_template;                                // the default template; "" if none
  std::map<std::string, std::string> named_chat_templates;  // list form, by name

  // Parses tokenizer_config.json text; wrong field types are BadInput naming `source` and the field.
  static TokenizerConfig from_json(const std::string& json_text, const std::string& source);
  static TokenizerConfig from_file(const std::string& path);
};

struct TokenizerFiles {
  Tokenizer tokenizer;
  std::optional<TokenizerConfig> config;  // absent if the directory has no tokenizer_config.json
};

// Loads `dir`/tokenizer.json (required) and `dir`/tokenizer_config.json (optional), taking the chat
// template from `dir`/chat_template.jinja when the config has none.
TokenizerFiles load_tokenizer_dir(const std::string& dir);

}  // namespace swarmt::tokenizer
