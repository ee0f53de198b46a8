// `swarmt armt`: ARMT adapters over any model directory (specs/armt.md).
//   swarmt armt init   --base DIR --config FILE --out DIR [--merged] [--allow-nonfinite]
//   swarmt armt train  --base DIR --config FILE --out DIR [--init ADAPTER] [--resume [--restart]]
//   swarmt armt layers --base DIR --config FILE --subsets "all;alternate;middle_upper:0.2" --eval-data FILE --out DIR
//   swarmt armt cost   --model DIR [--segments 1,2,4,...,64] [--json FILE]
//   swarmt armt lookup --model DIR [--pairs 5 --gap 14 --distance 128 --samples 40] [--json FILE]  (armt_lookup_command.cpp)
#include <chrono>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>

#include "swarmt/cli/cli_util.h"
#include "swarmt/cli/command.h"
#include "swarmt/cli/distributed_cli.h"
#include "swarmt/core/atomic_file.h"
#include "swarmt/core/error.h"
#include "swarmt/core/memory_budget.h"
#include "swarmt/core/memory_usage.h"
#include "swarmt/core/output_directory.h"
#include "swarmt/core/run_lock.h"
#include "swarmt/eval/qa_runner.h"
#include "swarmt/eval/report.h"
#include "swarmt/models/armt_cost.h"
#include "swarmt/models/armt_io.h"
#include "swarmt/report/markdown_table.h"
#include "swarmt/train/armt_task.h"
#include "swarmt/train/trainer.h"

namespace fs = std::filesystem;

namespace swarmt::cli {
namespace {

// A directory that already holds a model is never overwritten by init / train output.
void refuse_existing_model(const std::string& dir, const std::string& option) {
  std::error_code ec;
  const fs::file_status status = fs::status(dir, ec);
  SWARMT_CHECK_INPUT(!fs::exists(status) || fs::is_directory(status), option, ": ", dir, " exists and is not a directory");
  for (const char* file : {"config.json", models::kArmtConfigFile})
    SWARMT_CHECK_INPUT(!fs::exists(fs::path(dir) / file), option, ": ", dir, " already holds a model (", file,
                       "); choose another directory");
}

// The ARMT config of a file that is either a bare ARMT config or a training config with "armt".
models::ArmtConfig read_armt_config(const std::string& path) {
  Json j = read_json_file(path);
  SWARMT_CHECK_INPUT(j.is_object(), path, ": must be a JSON object");
  if (j.contains("armt")) return models::ArmtConfig::from_json(j["armt"], path + ": field 'armt'");
  return models::ArmtConfig::from_json(j, path);
}

// ---- init

struct InitOptions {
  std::string base, config, out;
  bool merged = false;
  bool allow_nonfinite = false;
};

int run_init(const InitOptions& o) {
  refuse_existing_model(o.out, "--out");
  auto config = read_armt_config(o.config);
  models::LoadOptions load;
  load.allow_nonfinite = o.allow_nonfinite;
  auto model = models::create_armt(o.base, config, load);
  const auto assets = models::read_model_assets(o.base);
  // Built under a hidden name and renamed into place complete: a killed init leaves no adapter directory
  // without its armt_config.json.
  OutputDirectory out(o.out, "--out");
  if (o.merged) {
    models::save_model(*model, out.path(), assets);
  } else {
    models::save_armt_adapter(*model, out.path(), o.base, assets);
  }
  out.commit();
  int64_t memory_params = 0;
  for (const auto& [name, t] : model->adapter_tensors()) memory_params += t.numel();
  std::cout << Json{{"out", o.out},
                    {"layout", o.merged ? "merged" : "adapter"},
                    {"memory_layers", model->memory_layers()},
                    {"memory_parameters", memory_params},
                    {"base_parameters", model->base().num_parameters()}}
                   .dump()
            << std::endl;
  return 0;
}

// ---- train

struct TrainOptions {
  std::string base, config, out, init, device = "cpu";
  bool resume = false;
  bool restart = false;
  bool detect_anomaly = false;
  DistributedCliOptions distributed;
};

// One ARMT training run; data parallel when `worker` holds a process group. The writing rank holds the
// run directory's lock (RunLock) while it runs; everything is validated before the first write.
train::TrainResult train_armt(const Json& config, const std::string& source, const TrainOptions& o, bool quiet,
                              const WorkerSetup& worker) {
  std::string base = o.base;
  if (base.empty()) {
    SWARMT_CHECK_INPUT(!o.init.empty(), "give --base (the model to wrap) or --init (an adapter, whose base is used)");
    // An adapter names its base; a merged ARMT directory is its own base (weights and tokenizer).
    base = models::is_armt_adapter_dir(o.init) ? models::armt_base_dir(o.init) : o.init;
  }
  auto setup = train::make_armt_training(config, source, base, o.init, worker.device);
  if (o.detect_anomaly) setup.trainer.detect_anomaly = true;
  const train::RunStart start = train::plan_run_start(o.out, train::start_mode(o.resume, o.restart));
  const std::string saved_config = o.out + "/train_config.json";
  if (worker.writer() && (!o.resume || !fs::exists(saved_config)))
    write_file_atomically(saved_config, config.dump(2) + "\n");
  train::Trainer trainer(*setup.task, setup.trainer, o.out, quiet);
  trainer.set_process_group(worker.group.get());
  return trainer.run(start);
}

Json train_summary(const train::TrainResult& result, const std::string& out) {
  Json summary{{"steps", result.steps},
               {"final_loss", result.final_loss},
               {"tokens_per_s", result.tokens_per_second},
               {"skipped_steps", result.skipped_steps},
               {"model_dir", out}};
  if (result.final_val_loss >= 0) summary["final_val_loss"] = result.final_val_loss;
  return summary;
}

int run_train(const TrainOptions& o, const GlobalOptions& globals) {
  if (auto launched = launch_if_requested(o.distributed, globals)) return *launched;
  const WorkerSetup worker = join_process_group(parse_device(o.device));
  std::optional<RunLock> lock;  // rank 0 only (see `swarmt train`)
  if (worker.writer()) lock.emplace(RunLock::acquire(o.out, "--out"));
  Json config = read_json_file(o.config);
  const std::string saved_config = o.out + "/train_config.json";
  // Resume continues the original run: its saved configuration wins over a changed file.
  if (o.resume && fs::exists(saved_config)) config = read_json_file(saved_config);
  if (!o.resume) refuse_existing_model(o.out, "--out");
  auto result = train_armt(config, o.config, o, globals.quiet, worker);
  if (worker.writer()) std::cout << train_summary(result, o.out).dump() << std::endl;
  return 0;
}

// ---- layers

std::vector<std::string> split_on_semicolons(const std::string& text) {
  std::vector<std::string> out;
  std::string item;
  for (char ch : text + ";") {
    if (ch == ';') {
      const auto b = item.find_first_not_of(' '), e = item.find_last_not_of(' ');
      if (b != std::string::npos) out.push_back(item.substr(b, e - b + 1));
      item.clear();
    } else {
      item += ch;
    }
  }
  return out;
}


struct LayersOptions : TrainOptions {
  std::string subsets, eval_data;
  int64_t max_examples = 0;
};

std::string subset_dir_name(const std::string& spec) {
  std::string name;
  for (char c : spec) name += (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-') ? c : '_';
  return name;
}

int run_layers(const LayersOptions& o, const GlobalOptions& globals) {
  SWARMT_CHECK_INPUT(!o.base.empty(), "--base is required");
  Json config = read_json_file(o.config);
  SWARMT_CHECK_INPUT(config.is_object() && config.contains("armt") && config["armt"].is_object(), o.config,
                     ": field 'armt' (the ARMT config whose memory_layers each subset replaces) is missing");
  std::vector<std::string> specs;
  for (const auto& item : split_on_semicolons(o.subsets)) specs.push_back(item);
  SWARMT_CHECK_INPUT(!specs.empty(), "--subsets: give at least one layer subset");
  const RunLock lock = RunLock::acquire(o.out, "--out");  // the runs under it are this process's alone
  Json rows = Json::array();
  MarkdownTable table({"memory layers", "layers", "memory params", "final loss", "val loss", "QA exact match (%)"});
  for (const auto& spec : specs) {
    Json layers = spec;
    if (!spec.empty() && spec.front() == '[') {
      try {
        layers = Json::parse(spec);
      } catch (const std::exception&) {
        throw_input_error("--subsets: '", spec, "' is not a JSON list of layer indices");
      }
    }
    Json run_config = config;
    run_config["armt"]["memory_layers"] = layers;
    LayersOptions run = o;
    run.out = o.out + "/" + subset_dir_name(spec);
    run.init.clear();
    if (!o.resume) refuse_existing_model(run.out, "--out");
    const RunLock run_lock = RunLock::acquire(run.out, "--out");  // each run is a run directory of its own
    WorkerSetup single;
    single.device = parse_device(o.device);
    auto result = train_armt(run_config, o.config + " (memory_layers " + spec + ")", run, globals.quiet, single);
    auto model = models::load_model(run.out);
    auto* armt = dynamic_cast<models::ArmtModel*>(model.get());
    SWARMT_CHECK(armt != nullptr, "the trained model is not an ARMT model");
    int64_t memory_params = 0;
    for (const auto& [name, t] : armt->adapter_tensors()) memory_params += t.numel();
    Json row{{"subset", spec}, {"memory_layers", armt->memory_layers()}, {"memory_parameters", memory_params},
             {"train", train_summary(result, run.out)}};
    std::string accuracy = "-";
    if (!o.eval_data.empty()) {
      eval::QaRunOptions qa;
      qa.data_path = o.eval_data;
      qa.max_examples = o.max_examples;
      qa.quiet = globals.quiet;
      auto loaded = infer::LoadedModel::load(run.out);
      auto eval_run = eval::run_qa(loaded, qa);
      eval::ReportOptions report;
      report.title = "QA exact match, memory layers " + spec;
      eval::write_eval_report(run.out + "/eval_qa", eval_run, report);
      double sum = 0;
      for (const auto& s : eval_run.samples) sum += s.score;
      const double mean = sum / static_cast<double>(std::max<size_t>(1, eval_run.samples.size()));
      row["qa_exact_match"] = mean;
      accuracy = format_fixed(mean, 1);
    }
    std::string listed;
    for (int64_t l : armt->memory_layers()) listed += (listed.empty() ? "" : ",") + std::to_string(l);
    table.add_row({spec, listed, std::to_string(memory_params), format_fixed(result.final_loss, 4),
                   result.final_val_loss >= 0 ? format_fixed(result.final_val_loss, 4) : "-", accuracy});
    rows.push_back(row);
  }
  write_file_atomically(o.out + "/layers.json", Json{{"base", o.base}, {"config", o.config}, {"runs", rows}}.dump(2) + "\n");
  const std::string text = "# ARMT memory on layer subsets\n\nBase: `" + o.base + "`, config: `" + o.config + "`.\n\n" +
                           table.render();
  write_file_atomically(o.out + "/layers.md", text);
  std::cout << table.render();
  return 0;
}

// ---- cost

struct CostOptions {
  std::string model, segments = "1,2,4,8,16,32,64", json_out, child;
};

// Child process: peak RSS of one forward over n random tokens, as ARMT (streamed segment by segment) or
// as the base model with full attention (one forward over everything).
int run_cost_child(const CostOptions& o) {
  const auto colon = o.child.find(':');
  const std::string kind = o.child.substr(0, colon);
  const int64_t n = std::stoll(o.child.substr(colon + 1));
  auto model = models::load_model(o.model);
  auto* armt = dynamic_cast<models::ArmtModel*>(model.get());
  SWARMT_CHECK_INPUT(armt != nullptr, o.model, ": not an ARMT model");
  at::NoGradGuard no_grad;
  at::Tensor tokens = at::randint(0, model->vocab_size(), {1, n}, at::TensorOptions().dtype(at::kLong));
  reset_peak_rss();
  const int64_t before = current_rss_bytes();
  auto t0 = std::chrono::steady_clock::now();
  if (kind == "armt") {
    auto state = armt->new_state(1);
    const int64_t seg = armt->config().segment_size;
    for (int64_t offset = 0; offset < n; offset += seg) {
      const int64_t len = std::min(seg, n - offset);
      armt->forward_stateful(tokens.narrow(1, offset, len), state).select(1, len - 1);
    }
  } else {
    armt->base().forward(tokens).select(1, n - 1);
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cout << Json{{"kind", kind}, {"tokens", n}, {"peak_rss_bytes", peak_rss_since_reset_bytes()},
                    {"rss_before_bytes", before}, {"seconds", seconds}}
                   .dump()
            << std::endl;
  return 0;
}

int run_cost(const CostOptions& o) {
  if (!o.child.empty()) return run_cost_child(o);
  auto model = models::load_model(o.model);
  auto* armt = dynamic_cast<models::ArmtModel*>(model.get());
  SWARMT_CHECK_INPUT(armt != nullptr, o.model, ": not an ARMT model (give an adapter or merged ARMT directory)");
  const auto shape = models::DecoderShape::from_config(armt->base().config_json(), o.model + " (base config)");
  const int64_t T = armt->config().segment_size;
  const int64_t wrapped = static_cast<int64_t>(armt->memory_layers().size());
  // Every length is checked before the first measurement: the base's forward over all k·T tokens holds
  // at least the tokens, a hidden state and a row of logits per token (a billion segments used to spin).
  const std::vector<int64_t> segment_counts = parse_lengths(o.segments, "--segments");
  const double bytes_per_token = static_cast<double>(kMinBytesPerContextToken) +
                                 4.0 * static_cast<double>(armt->hidden_size() + armt->vocab_size());
  for (int64_t k : segment_counts)
    check_count_fits(k, static_cast<double>(T) * bytes_per_token, "--segments", "segment",
                     str_cat("each segment is ", T, " tokens, and the base runs all of them at once; give fewer"));
  Json rows = Json::array();
  MarkdownTable table({"segments", "tokens", "base GFLOP", "ARMT GFLOP", "ARMT / base", "base peak MB", "ARMT peak MB"});
  for (int64_t k : segment_counts) {
    const int64_t n = k * T;
    const double base_flops = models::full_attention_forward_flops(shape, n);
    const double armt_flops = models::armt_forward_flops(shape, armt->config(), wrapped, n);
    const std::string prefix = "-q armt cost --model '" + o.model + "' --child ";
    Json base_run = run_self_for_json(prefix + "base:" + std::to_string(n), str_cat("armt cost: base over ", n, " tokens"));
    Json armt_run = run_self_for_json(prefix + "armt:" + std::to_string(n), str_cat("armt cost: ARMT over ", n, " tokens"));
    const double base_mb = base_run["peak_rss_bytes"].get<double>() / 1048576.0;
    const double armt_mb = armt_run["peak_rss_bytes"].get<double>() / 1048576.0;
    rows.push_back(Json{{"segments", k}, {"tokens", n}, {"base_flops", base_flops}, {"armt_flops", armt_flops},
                        {"flops_ratio", armt_flops / base_flops}, {"base", base_run}, {"armt", armt_run}});
    table.add_row({std::to_string(k), std::to_string(n), format_fixed(base_flops / 1e9, 3), format_fixed(armt_flops / 1e9, 3),
                   format_fixed(armt_flops / base_flops, 3), format_fixed(base_mb, 1), format_fixed(armt_mb, 1)});
  }
  std::cout << table.render();
  if (!o.json_out.empty())
    write_file_atomically(o.json_out, Json{{"model", o.model}, {"segment_size", T}, {"memory_layers", wrapped},
                                           {"rows", rows}}.dump(2) + "\n");
  return 0;
}

}  // namespace

void register_armt(CLI::App& app, const GlobalOptions& globals, CommandList& commands) {
  CLI::App* group = app.add_subcommand("armt", "ARMT: associative memory around a model (init, train, layers, cost, lookup)");
  group->require_subcommand(1);

  auto init = std::make_shared<InitOptions>();
  CLI::App* c = group->add_subcommand("init", "Wrap a model directory with an untrained ARMT adapter");
  c->add_option("--base", init->base, "Base model directory")->required();
  c->add_option("-c,--config", init->config, "ARMT config (or a training config with \"armt\")")->required();
  c->add_option("-o,--out", init->out, "Output directory")->required();
  c->add_flag("--merged", init->merged, "Write one model directory (base + adapter) instead of an adapter");
  c->add_flag("--allow-nonfinite", init->allow_nonfinite, "Wrap a base whose weights hold NaN or Inf (refused otherwise)");
  commands.push_back({c, [init]() { return run_init(*init); }});

  auto train = std::make_shared<TrainOptions>();
  c = group->add_subcommand("train", "ARMT recipe: continued pretraining / fine-tuning with a segment curriculum");
  c->add_option("--base", train->base, "Base model directory (default: the --init adapter's base, or the --init merged directory itself)");
  c->add_option("-c,--config", train->config, "ARMT training config (JSON)")->required();
  c->add_option("-o,--out", train->out, "Run directory: the trained model, checkpoints/, metrics.jsonl")->required();
  c->add_option("--init", train->init, "Start from this ARMT model's weights and config: an adapter, or a merged directory (continues a run in new phases)");
  CLI::Option* resume = c->add_flag("--resume", train->resume, "Continue from the latest valid checkpoint in --out");
  c->add_flag("--restart", train->restart,
              "With --resume: when --out holds no valid checkpoint, start again from step 0 (broken checkpoints are "
              "set aside, never deleted)")
      ->needs(resume);
  c->add_flag("--detect-anomaly", train->detect_anomaly, "Fail at the first NaN in backward, naming its forward op (slow)");
  c->add_option("--device", train->device, "cpu, cuda or cuda:N")->capture_default_str();
  add_distributed_options(c, train->distributed);
  commands.push_back({c, [train, &globals]() { return run_train(*train, globals); }});

  auto layers = std::make_shared<LayersOptions>();
  c = group->add_subcommand("layers", "Train and evaluate memory on different layer subsets");
  c->add_option("--base", layers->base, "Base model directory")->required();
  c->add_option("-c,--config", layers->config, "ARMT training config (its armt.memory_layers is replaced)")->required();
  c->add_option("--subsets", layers->subsets, "Semicolon-separated subsets: all;alternate;middle_upper:0.2;[2,3]")
      ->required();
  c->add_option("--eval-data", layers->eval_data, "QA JSONL (`swarmt data synth`) to evaluate each run on");
  c->add_option("--max-examples", layers->max_examples, "Evaluate the first N examples only");
  c->add_option("-o,--out", layers->out, "Output directory: one run per subset, layers.json, layers.md")->required();
  c->add_flag("--resume", layers->resume, "Continue runs from their checkpoints");
  c->add_option("--device", layers->device, "cpu, cuda or cuda:N")->capture_default_str();
  commands.push_back({c, [layers, &globals]() { return run_layers(*layers, globals); }});

  auto cost = std::make_shared<CostOptions>();
  c = group->add_subcommand("cost", "FLOPs and peak memory of ARMT vs the base with full attention, by input length");
  c->add_option("-m,--model", cost->model, "ARMT model (adapter or merged directory)")->required();
  c->add_option("--segments", cost->segments, "Input lengths in segments")->capture_default_str();
  c->add_option("--json", cost->json_out, "Write the table as JSON");
  c->add_option("--child", cost->child, "internal: one measurement (armt:N or base:N)")->group("");
  commands.push_back({c, [cost]() { return run_cost(*cost); }});

  register_armt_lookup(*group, commands);
}

}  // namespace swarmt::cli
