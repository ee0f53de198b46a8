// `swarmt generate`: stream text from a model directory (SWAX, Llama, Gemma-3, ARMT).
//   swarmt generate --model DIR --prompt TEXT [--chat] [--max-new-tokens N] [--temperature T]
//                   [--top-k K] [--top-p P] [--seed S] [--stop STR]... [--window W] [--stats]
#include <iostream>
#include <memory>

#include "swarmt/cli/cli_util.h"
#include "swarmt/cli/command.h"
#include "swarmt/core/error.h"
#include "swarmt/core/json.h"
#include "swarmt/core/memory_usage.h"
#include "swarmt/infer/generate.h"
#include "swarmt/infer/loaded_model.h"
#include "swarmt/tokenizer/chat_format.h"
#include "swarmt/tokenizer/stop_strings.h"
#include "swarmt/tokenizer/stream_decoder.h"
#include "swarmt/tokenizer/utf8.h"

namespace swarmt::cli {
namespace {

struct GenerateOptions {
  std::string model;
  std::string prompt;
  std::string prompt_file;
  std::string system;
  bool chat = false;
  int64_t max_new_tokens = 128;
  double temperature = 0.0;
  int64_t top_k = 0;
  double top_p = 1.0;
  uint64_t seed = 0;
  std::vector<std::string> stop;
  int64_t window = 0;
  int64_t prefill_chunk = 1024;
  std::string device = "cpu";
  std::string dtype;
  bool stats = false;
  bool ignore_eos = false;
  bool allow_nonfinite = false;
  bool prompt_given = false;       // set after parsing: --prompt "" is given, and empty
  bool prompt_file_given = false;
};

// The prompt from --prompt or --prompt-file, as valid UTF-8, with errors naming the option and the file.
std::string read_prompt(const GenerateOptions& o) {
  SWARMT_CHECK_INPUT(o.prompt_given != o.prompt_file_given, "give exactly one of --prompt and --prompt-file");
  if (o.prompt_given) {
    SWARMT_CHECK_INPUT(!o.prompt.empty(), "--prompt is empty: give the text to continue");
    tokenizer::require_valid_utf8(o.prompt, "--prompt");
    return o.prompt;
  }
  const std::string prompt = read_text_file(o.prompt_file);  // names the file (and refuses a directory)
  SWARMT_CHECK_INPUT(!prompt.empty(), "--prompt-file ", o.prompt_file, ": the file is empty");
  tokenizer::require_valid_utf8(prompt, "--prompt-file " + o.prompt_file);
  return prompt;
}

int run_generate(const GenerateOptions& o) {
  SWARMT_CHECK_INPUT(o.max_new_tokens >= 0, "--max-new-tokens must be >= 0");
  SWARMT_CHECK_INPUT(o.prefill_chunk > 0, "--prefill-chunk must be positive");
  const std::string prompt = read_prompt(o);

  infer::InferenceOptions load;
  load.allow_nonfinite = o.allow_nonfinite;
  load.device = parse_device(o.device);
  load.dtype = parse_dtype(o.dtype);
  load.window = o.window;
  load.prefill_chunk = o.prefill_chunk;
  auto model = infer::LoadedModel::load(o.model, load);
  const auto& tok = model.tokenizer();

  std::vector<int32_t> ids;
  std::vector<std::string> stop_strings = o.stop;
  std::vector<int64_t> stop_ids = o.ignore_eos ? std::vector<int64_t>{} : model.stop_ids();
  if (o.chat) {
    SWARMT_CHECK_INPUT(model.tokenizer_config().has_value(), o.model,
                       ": --chat needs tokenizer_config.json with a chat_template (or drop --chat)");
    auto format = tokenizer::ChatFormat::from_config(*model.tokenizer_config());
    std::vector<tokenizer::ChatMessage> messages;
    if (!o.system.empty()) messages.push_back({"system", o.system});
    messages.push_back({"user", prompt});
    ids = format.encode(tok, messages, /*add_generation_prompt=*/true);
    for (const auto& s : format.stop_strings()) stop_strings.push_back(s);
    for (int32_t id : format.stop_ids(tok)) stop_ids.push_back(id);
  } else {
    SWARMT_CHECK_INPUT(o.system.empty(), "--system needs --chat");
    ids = tok.encode(prompt, /*add_special_tokens=*/true);
  }

  infer::GenerateOptions g;
  g.max_new_tokens = o.max_new_tokens;
  g.sampling.temperature = o.temperature;
  g.sampling.top_k = o.top_k;
  g.sampling.top_p = o.top_p;
  g.sampling.seed = o.seed;
  g.stop_ids = stop_ids;
  g.vocab_limit = tok.vocab_size();

  tokenizer::StreamDecoder decoder(tok, /*skip_special_tokens=*/true);
  tokenizer::StopStringFilter filter(stop_strings);
  auto on_token = [&](int64_t id) {
    std::cout << filter.push(decoder.push(static_cast<int32_t>(id))) << std::flush;
    return !filter.stopped();
  };
  std::vector<int64_t> prompt_ids(ids.begin(), ids.end());
  auto stream = model.new_stream();
  auto result = infer::generate(*stream, prompt_ids, g, on_token);
  if (!filter.stopped()) std::cout << filter.push(decoder.flush()) << filter.flush();
  std::cout << std::endl;
  if (o.stats) {
    Json stats{{"prompt_tokens", result.prompt_tokens},
               {"generated_tokens", result.tokens.size()},
               {"stop_reason", filter.stopped() ? "stop_string" : result.stop_reason},
               {"prefill_tokens_per_s", result.prompt_tokens / std::max(1e-9, result.prefill_seconds)},
               // Forward passes per second after the prompt (n tokens take n - 1 of them: the first comes
               // from the prefill); null when there was none.
               {"decode_tokens_per_s", result.decode_steps > 0 ? Json(result.decode_steps / result.decode_seconds)
                                                               : Json(nullptr)},
               {"decode_steps", result.decode_steps},
               {"state_bytes", result.state_bytes},
               {"peak_rss_bytes", peak_rss_bytes()}};
    std::cerr << stats.dump() << std::endl;
  }
  return 0;
}

}  // namespace

void register_generate(CLI::App& app, const GlobalOptions&, CommandList& commands) {
  auto o = std::make_shared<GenerateOptions>();
  CLI::App* cmd = app.add_subcommand("generate", "Generate text from a model directory, streaming to stdout");
  cmd->add_option("-m,--model", o->model, "Model directory (SWAX, Llama, Gemma-3 or ARMT)")->required();
  CLI::Option* prompt = cmd->add_option("-p,--prompt", o->prompt, "Prompt text");
  CLI::Option* prompt_file = cmd->add_option("-f,--prompt-file", o->prompt_file, "Read the prompt from a file");
  cmd->add_flag("--chat", o->chat, "Wrap the prompt as a user turn in the model's chat format");
  cmd->add_option("--system", o->system, "System message (with --chat)");
  cmd->add_option("-n,--max-new-tokens", o->max_new_tokens, "Tokens to generate at most")->capture_default_str();
  cmd->add_option("--temperature", o->temperature, "Sampling temperature (0 = greedy)")->capture_default_str();
  cmd->add_option("--top-k", o->top_k, "Keep the k most likely tokens (0 = all)")->capture_default_str();
  cmd->add_option("--top-p", o->top_p, "Nucleus sampling mass")->capture_default_str();
  cmd->add_option("--seed", o->seed, "Sampling seed")->capture_default_str();
  cmd->add_option("--stop", o->stop, "Stop when this text appears (repeatable)");
  cmd->add_flag("--ignore-eos", o->ignore_eos, "Do not stop at end-of-sequence tokens");
  cmd->add_option("--window", o->window, "Sliding window of SWA layers at inference (default: the model's)");
  cmd->add_option("--prefill-chunk", o->prefill_chunk, "Prompt tokens per prefill forward")->capture_default_str();
  cmd->add_option("--device", o->device, "cpu, cuda or cuda:N")->capture_default_str();
  cmd->add_option("--dtype", o->dtype, "Weights dtype: float32, bfloat16 (default: as stored)");
  cmd->add_flag("--stats", o->stats, "Print speed and memory as JSON to stderr");
  cmd->add_flag("--allow-nonfinite", o->allow_nonfinite, "Load weights that hold NaN or Inf (refused otherwise)");
  commands.push_back({cmd, [o, prompt, prompt_file]() {
                        o->prompt_given = prompt->count() > 0;
                        o->prompt_file_given = prompt_file->count() > 0;
                        return run_generate(*o);
                      }});
}

}  // namespace swarmt::cli
