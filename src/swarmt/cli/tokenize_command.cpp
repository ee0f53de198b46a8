// `swarmt tokenize`: look at what a tokenizer does.
//   swarmt tokenize --model DIR --text "Hello"            ids as a JSON array: [9259]
//   swarmt tokenize --tokenizer FILE --text "Hi" --add-special-tokens
//   swarmt tokenize --model DIR --text "Hi" --chat        the text as one user turn of the chat format
//   swarmt tokenize --model DIR --text "Hi" --tokens      also the token strings, as a second JSON array
//   swarmt tokenize --model DIR --decode 9259,1902        the text of the ids
#include <filesystem>
#include <iostream>
#include <memory>
#include <sstream>

#include "swarmt/cli/command.h"
#include "swarmt/core/error.h"
#include "swarmt/core/json.h"
#include "swarmt/tokenizer/chat_format.h"
#include "swarmt/tokenizer/tokenizer.h"
#include "swarmt/tokenizer/tokenizer_config.h"

namespace swarmt::cli {
namespace {

using tokenizer::Tokenizer;
using tokenizer::TokenizerFiles;

struct TokenizeOptions {
  std::string model_dir;
  std::string tokenizer_file;
  std::string text;
  std::string text_file;
  std::string decode;
  bool add_special_tokens = false;
  bool skip_special_tokens = false;
  bool chat = false;
  bool tokens = false;
};

// --model DIR, or --tokenizer FILE with an optional tokenizer_config.json beside it.
TokenizerFiles load(const TokenizeOptions& opts) {
  if (!opts.model_dir.empty()) return tokenizer::load_tokenizer_dir(opts.model_dir);
  TokenizerFiles files{Tokenizer::from_file(opts.tokenizer_file), std::nullopt};
  auto config_path = std::filesystem::path(opts.tokenizer_file).parent_path() / "tokenizer_config.json";
  if (std::filesystem::exists(config_path)) files.config = tokenizer::TokenizerConfig::from_file(config_path.string());
  return files;
}

std::vector<int32_t> parse_id_list(const std::string& list) {
  std::vector<int32_t> ids;
  std::stringstream stream(list);
  std::string item;
  while (std::getline(stream, item, ',')) {
    size_t begin = item.find_first_not_of(" \t"), end = item.find_last_not_of(" \t");
    SWARMT_CHECK_INPUT(begin != std::string::npos, "--decode: empty entry in '", list, "'");
    item = item.substr(begin, end - begin + 1);
    size_t used = 0;
    long long value = -1;
    try {
      value = std::stoll(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    SWARMT_CHECK_INPUT(used == item.size() && value >= 0 && value <= INT32_MAX, "--decode: '", item,
                       "' is not a token id (expected comma-separated non-negative integers)");
    ids.push_back(static_cast<int32_t>(value));
  }
  return ids;
}

int run_tokenize(const TokenizeOptions& opts) {
  SWARMT_CHECK_INPUT(opts.model_dir.empty() != opts.tokenizer_file.empty(),
                     "tokenize: give exactly one of --model DIR or --tokenizer FILE");
  int sources = !opts.text.empty() + !opts.text_file.empty() + !opts.decode.empty();
  SWARMT_CHECK_INPUT(sources == 1, "tokenize: give exactly one of --text, --text-file or --decode");
  SWARMT_CHECK_INPUT(!(opts.chat && opts.add_special_tokens),
                     "tokenize: --add-special-tokens cannot be combined with --chat (the chat format already "
                     "contains its special tokens; adding them again would give a double <bos>)");
  TokenizerFiles files = load(opts);
  const Tokenizer& tok = files.tokenizer;

  if (!opts.decode.empty()) {
    std::cout << tok.decode(parse_id_list(opts.decode), opts.skip_special_tokens) << std::endl;
    return 0;
  }
  std::string text = opts.text_file.empty() ? opts.text : read_text_file(opts.text_file);
  std::vector<int32_t> ids;
  if (opts.chat) {
    SWARMT_CHECK_INPUT(files.config.has_value(), tok.source(),
                       ": --chat needs the chat template from tokenizer_config.json, which is not there");
    auto format = tokenizer::ChatFormat::from_config(*files.config);
    ids = format.encode(tok, {{"user", text}}, /*add_generation_prompt=*/true);
  } else {
    ids = tok.encode(text, opts.add_special_tokens);
  }
  std::cout << Json(ids).dump() << "\n";
  if (opts.tokens) {
    Json strings = Json::array();
    for (int32_t id : ids) strings.push_back(tok.id_to_token(id));
    std::cout << strings.dump() << "\n";
  }
  std::cout.flush();
  return 0;
}

}  // namespace

void register_tokenize(CLI::App& app, const GlobalOptions& globals, CommandList& commands) {
  auto opts = std::make_shared<TokenizeOptions>();
  CLI::App* cmd = app.add_subcommand("tokenize", "Encode text to token ids (JSON) or decode ids to text");
  cmd->add_option("--model", opts->model_dir, "Model directory with tokenizer.json (+ tokenizer_config.json)");
  cmd->add_option("--tokenizer", opts->tokenizer_file, "A tokenizer.json file");
  cmd->add_option("--text", opts->text, "Text to encode");
  cmd->add_option("--text-file", opts->text_file, "File whose whole content is the text to encode");
  cmd->add_option("--decode", opts->decode, "Comma-separated ids to decode, e.g. 9259,1902");
  cmd->add_flag("--add-special-tokens", opts->add_special_tokens, "Apply the post-processor (e.g. leading <bos>)");
  cmd->add_flag("--skip-special-tokens", opts->skip_special_tokens, "With --decode: leave out special tokens");
  cmd->add_flag("--chat", opts->chat, "Encode the text as one user turn of the model's chat format");
  cmd->add_flag("--tokens", opts->tokens, "Also print the token strings (second JSON array)");
  commands.push_back({cmd, [opts]() { return run_tokenize(*opts); }});
}

}  // namespace swarmt::cli
