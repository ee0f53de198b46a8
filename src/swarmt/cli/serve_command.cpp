// `swarmt serve`: an OpenAI-compatible HTTP server over one model directory, with sessions whose state
// stays on the server (constant size for SWAX and ARMT) and can be saved to files and loaded again.
//   swarmt serve --model DIR [--host 127.0.0.1] [--port 8080] [--max-sessions N] [--state-dir DIR]
//                [--api-key K] [--parallel N] [--ctx-size N] [--max-tokens N] [--memory-budget-mb MB]
// See docs/serving.md.
#include <cstdlib>
#include <iostream>
#include <memory>

#include "swarmt/cli/cli_util.h"
#include "swarmt/cli/command.h"
#include "swarmt/core/error.h"
#include "swarmt/infer/loaded_model.h"
#include "swarmt/serve/http_server.h"
#include "swarmt/serve/model_service.h"

namespace swarmt::cli {
namespace {

struct ServeOptions {
  std::string model;
  std::string alias;
  std::string device = "cpu";
  std::string dtype;
  int64_t window = 0;
  int64_t prefill_chunk = 1024;
  int64_t memory_budget_mb = 0;
  bool allow_nonfinite = false;
  serve::ServiceOptions service;
  serve::HttpOptions http;
};

int run_serve(ServeOptions& o) {
  SWARMT_CHECK_INPUT(o.memory_budget_mb >= 0, "--memory-budget-mb must not be negative");
  if (o.http.api_key.empty()) {
    if (const char* key = std::getenv("SWARMT_API_KEY")) o.http.api_key = key;
  }
  infer::InferenceOptions load;
  load.device = parse_device(o.device);
  load.dtype = parse_dtype(o.dtype);
  load.window = o.window;
  load.prefill_chunk = o.prefill_chunk;
  load.allow_nonfinite = o.allow_nonfinite;
  auto model = std::make_shared<infer::LoadedModel>(infer::LoadedModel::load(o.model, load));
  o.service.model_name = o.alias;
  o.service.memory_budget = o.memory_budget_mb * (int64_t(1) << 20);
  auto service = serve::ModelService::create(model, o.service);
  std::cerr << "swarmt serve: " << service->model_name() << ": " << service->describe() << std::endl;
  if (o.http.host != "127.0.0.1" && o.http.host != "localhost" && o.http.host != "::1" && o.http.api_key.empty())
    std::cerr << "swarmt serve: warning: listening on " << o.http.host << " without --api-key: anyone who can reach "
              << "this address can use the model" << std::endl;
  return serve::run_http_server(*service, o.http);
}

}  // namespace

void register_serve(CLI::App& app, const GlobalOptions&, CommandList& commands) {
  auto o = std::make_shared<ServeOptions>();
  CLI::App* cmd = app.add_subcommand("serve", "Serve a model over an OpenAI-compatible HTTP API, with sessions");
  cmd->add_option("-m,--model", o->model, "Model directory (SWAX, Llama, Gemma-3 or ARMT)")->required();
  cmd->add_option("--host", o->http.host, "Address to listen on (default: loopback only)")->capture_default_str();
  cmd->add_option("--port", o->http.port, "Port (0: any free port, printed when listening)")->capture_default_str();
  cmd->add_option("--api-key", o->http.api_key, "Require 'Authorization: Bearer KEY' (or set SWARMT_API_KEY)");
  cmd->add_option("--alias", o->alias, "Model name in the API (default: the directory's name)");
  cmd->add_option("--state-dir", o->service.state_dir, "Directory of saved session states (default: saving is off)");
  cmd->add_option("--max-sessions", o->service.max_sessions, "Sessions held at once")->capture_default_str();
  cmd->add_option("--memory-budget-mb", o->memory_budget_mb,
                  "Memory for session states, MiB (0: half the memory available at start)")->capture_default_str();
  cmd->add_option("--ctx-size", o->service.ctx_size,
                  "Most tokens per session for models whose state grows (full attention)")->capture_default_str();
  cmd->add_option("--max-tokens", o->service.max_tokens, "Largest max_tokens a request may ask")->capture_default_str();
  cmd->add_option("--parallel", o->http.threads, "Connections served at once")->capture_default_str();
  cmd->add_option("--max-body-bytes", o->http.max_body_bytes, "Largest request body")->capture_default_str();
  cmd->add_option("--timeout", o->http.timeout_seconds, "Seconds to read a request or write a response")->capture_default_str();
  cmd->add_option("--window", o->window, "Sliding window of SWA layers at inference (default: the model's)");
  cmd->add_option("--prefill-chunk", o->prefill_chunk, "Prompt tokens per prefill forward")->capture_default_str();
  cmd->add_option("--device", o->device, "cpu, cuda or cuda:N")->capture_default_str();
  cmd->add_option("--dtype", o->dtype, "Weights dtype: float32, bfloat16 (default: as stored)");
  cmd->add_flag("--allow-nonfinite", o->allow_nonfinite, "Load weights that hold NaN or Inf (refused otherwise)");
  commands.push_back({cmd, [o]() { return run_serve(*o); }});
}

}  // namespace swarmt::cli
