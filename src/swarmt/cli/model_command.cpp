// `swarmt model`: work with model configurations without training.
//   swarmt model describe CONFIG.json|MODEL_DIR [--context N] [--json]
//       parameters by block kind, memory of weights / training state / inference state, FLOPs per token;
//       SWAX layouts of any size (the 7B one included) are described one block at a time.
//   swarmt model init CONFIG.json --out DIR [--seed S] [--tokenizer byte|DIR|none] [--dtype float32|bfloat16]
//       a freshly initialised model directory (config.json + model.safetensors), e.g. as a baseline,
//       stored in fp32 unless --dtype says otherwise.
#include <filesystem>
#include <iostream>
#include <memory>

#include "swarmt/cli/cli_util.h"
#include "swarmt/cli/command.h"
#include "swarmt/core/error.h"
#include "swarmt/core/json.h"
#include "swarmt/core/output_directory.h"
#include "swarmt/data/source_factory.h"
#include "swarmt/models/model_footprint.h"
#include "swarmt/models/model_io.h"
#include "swarmt/models/registry.h"
#include "swarmt/models/swax_mixers.h"
#include "swarmt/models/swax_summary.h"
#include "swarmt/report/markdown_table.h"

namespace fs = std::filesystem;

namespace swarmt::cli {
namespace {

// A config file, or a model directory's config.json.
std::string config_path_of(const std::string& path) {
  return fs::is_directory(path) ? path + "/config.json" : path;
}

std::string human_bytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024 && u < 4) {
    bytes /= 1024;
    ++u;
  }
  return format_fixed(bytes, u == 0 ? 0 : 2) + " " + units[u];
}

std::string human_count(double n) {
  if (n >= 1e9) return format_fixed(n / 1e9, 3) + " B";
  if (n >= 1e6) return format_fixed(n / 1e6, 3) + " M";
  if (n >= 1e3) return format_fixed(n / 1e3, 1) + " k";
  return format_fixed(n, 0);
}

struct DescribeOptions {
  std::string path;
  int64_t context = 4096;
  bool json = false;
};

int run_describe(const DescribeOptions& o) {
  SWARMT_CHECK_INPUT(o.context > 0, "--context must be positive");
  const std::string source = config_path_of(o.path);
  const Json config = read_json_file(source);
  SWARMT_CHECK_INPUT(config.is_object(), source, ": expected a JSON object");
  const std::string type = config.value("model_type", std::string("swax"));
  if (type != "swax") {
    // Other architectures are built whole (they are pretrained checkpoints' configs, loaded anyway).
    models::check_model_fits(config, source);
    auto model = models::create_model(config, source);
    Json out{{"model_type", type}, {"total_parameters", model->num_parameters()}, {"num_layers", model->num_layers()}};
    if (o.json) {
      std::cout << out.dump(2) << std::endl;
    } else {
      std::cout << source << ": " << type << ", " << model->num_layers() << " layers, "
                << human_count(static_cast<double>(model->num_parameters())) << " parameters\n";
    }
    return 0;
  }
  const auto swax = models::SwaxConfig::from_json(config, source);
  // Any number of blocks can be described, but each kind's block is built once to count it.
  for (char kind : swax.layer_pattern) models::check_swax_block_fits(swax, kind, source);
  const auto summary = models::summarize_swax(swax, o.context);
  if (o.json) {
    Json out = summary.to_json();
    out["model_type"] = "swax";
    out["layer_pattern"] = swax.layer_pattern;
    std::cout << out.dump(2) << std::endl;
    return 0;
  }
  const Json j = summary.to_json();
  std::cout << source << ": SWAX, " << swax.num_hidden_layers() << " blocks (" << swax.layer_pattern << "), d "
            << swax.hidden_size << ", vocab " << swax.vocab_size << "\n\n";
  MarkdownTable blocks({"block", "count", "parameters each", "parameters", "state/seq @" + std::to_string(o.context),
                        "GFLOP/token each"});
  for (const auto& [kind, k] : summary.kinds)
    blocks.add_row({std::string(1, kind) + " " + models::swax_mixer_kind(kind).description, std::to_string(k.count),
                    human_count(static_cast<double>(k.parameters_per_block)),
                    human_count(static_cast<double>(k.count * k.parameters_per_block)),
                    human_bytes(static_cast<double>(k.count * k.state_bytes_per_block)),
                    format_fixed(k.flops_per_token / 1e9, 4)});
  blocks.add_row({"embedding", "1", "", human_count(static_cast<double>(summary.embedding_parameters)), "", ""});
  blocks.add_row({"head (lm_head + norm)", "1", "", human_count(static_cast<double>(summary.head_parameters)), "", ""});
  std::cout << blocks.render() << "\n";
  const double p = static_cast<double>(summary.total_parameters);
  std::cout << "parameters            " << human_count(p) << " (" << summary.total_parameters << ")\n"
            << "weights               " << human_bytes(4 * p) << " fp32, " << human_bytes(2 * p) << " bf16\n"
            << "training state        " << human_bytes(16 * p) << " (fp32 weights + grads + AdamW moments; no activations)\n"
            << "inference state       " << human_bytes(static_cast<double>(summary.state_bytes))
            << " per sequence at " << o.context << " tokens (fp32)\n"
            << "forward               " << format_fixed(summary.forward_flops_per_token / 1e9, 3)
            << " GFLOP/token (training ~3x: " << format_fixed(j["training_flops_per_token"].get<double>() / 1e9, 3)
            << ")\n";
  return 0;
}

struct InitOptions {
  std::string config, out, tokenizer = "byte", dtype;
  uint64_t seed = 0;
  bool force = false;
};

int run_init(const InitOptions& o) {
  const Json config = read_json_file(o.config);
  SWARMT_CHECK_INPUT(!fs::exists(o.out + "/model.safetensors") || o.force, o.out,
                     ": already holds a model (pass --force to replace it)");
  // The same check as `swarmt train`, before a single weight is allocated.
  models::check_model_fits(config, o.config);
  const auto dtype = parse_dtype(o.dtype);
  torch::manual_seed(o.seed);
  auto model = models::create_model(config, o.config);
  if (dtype) model->to(*dtype);  // drawn in fp32, then rounded: the same weights whatever the dtype
  models::ModelAssets assets;
  if (o.tokenizer != "none") {
    const auto tok = data::load_text_tokenizer(o.tokenizer);
    SWARMT_CHECK_INPUT(tok.tokenizer.vocab_size() <= model->vocab_size(), "--tokenizer: ", o.tokenizer, " has ",
                       tok.tokenizer.vocab_size(), " tokens but the model's vocab_size is ", model->vocab_size());
    assets.tokenizer_json = tok.tokenizer_json;
    assets.tokenizer_config_json = tok.tokenizer_config_json;
  }
  // A new directory appears complete or not at all; an existing one is written in place, locked.
  OutputDirectory out(o.out, "--out");
  models::save_model(*model, out.path(), assets);
  out.commit();
  std::cout << o.out << ": " << model->model_type() << ", " << model->num_parameters() << " parameters\n";
  return 0;
}

}  // namespace

void register_model(CLI::App& app, const GlobalOptions& globals, CommandList& commands) {
  CLI::App* group = app.add_subcommand("model", "Describe or initialise models from their configs");
  group->require_subcommand(1);

  auto d = std::make_shared<DescribeOptions>();
  CLI::App* describe = group->add_subcommand("describe", "Parameters, memory and FLOPs of a config (any size)");
  describe->add_option("config", d->path, "config.json or a model directory")->required();
  describe->add_option("--context", d->context, "Context length for state size and FLOPs")->capture_default_str();
  describe->add_flag("--json", d->json, "Print JSON instead of a table");
  commands.push_back({describe, [d]() { return run_describe(*d); }});

  auto i = std::make_shared<InitOptions>();
  CLI::App* init = group->add_subcommand("init", "Write a freshly initialised model directory");
  init->add_option("config", i->config, "config.json of the model")->required();
  init->add_option("-o,--out", i->out, "Model directory to write")->required();
  init->add_option("--seed", i->seed, "Initialisation seed")->capture_default_str();
  init->add_option("--tokenizer", i->tokenizer, "byte, a directory with tokenizer.json, or none")->capture_default_str();
  init->add_option("--dtype", i->dtype, "Stored dtype: float32, bfloat16 (default: float32)");
  init->add_flag("--force", i->force, "Replace a model already in --out");
  commands.push_back({init, [i]() { return run_init(*i); }});
  (void)globals;
}

}  // namespace swarmt::cli
