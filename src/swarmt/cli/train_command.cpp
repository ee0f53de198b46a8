// `swarmt train`: train a model from a training config (SWAX hybrids, baselines, or continued training of
// any model directory).
//   swarmt train --config FILE --out DIR [--max-steps N] [--resume [--restart]] [--device cpu|cuda]
//                [--nproc-per-node N [--nnodes M --node-rank K --master-addr A --master-port P]]
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>

#include "swarmt/cli/cli_util.h"
#include "swarmt/cli/command.h"
#include "swarmt/cli/distributed_cli.h"
#include "swarmt/core/atomic_file.h"
#include "swarmt/core/error.h"
#include "swarmt/core/json.h"
#include "swarmt/core/run_lock.h"
#include "swarmt/train/train_setup.h"

namespace fs = std::filesystem;

namespace swarmt::cli {
namespace {

struct TrainOptions {
  std::string config, out, device = "cpu";
  int64_t max_steps = 0;
  bool resume = false;
  bool restart = false;
  bool detect_anomaly = false;
  DistributedCliOptions distributed;
};

int run_train(const TrainOptions& o, const GlobalOptions& globals) {
  if (auto launched = launch_if_requested(o.distributed, globals)) return *launched;
  WorkerSetup worker = join_process_group(parse_device(o.device));
  // One writer per run directory, for the life of this process: a second `train --out` of the same
  // directory is refused here, before it reads or writes anything there. Workers of a data-parallel
  // run do not lock: only rank 0 writes (and the launcher holds no lock its workers could wait for).
  std::optional<RunLock> lock;
  if (worker.writer()) lock.emplace(RunLock::acquire(o.out, "--out"));
  Json config = read_json_file(o.config);
  if (o.max_steps > 0) config["training"]["max_steps"] = o.max_steps;
  if (o.detect_anomaly) config["training"]["detect_anomaly"] = true;
  const std::string saved_config = o.out + "/train_config.json";
  if (o.resume && fs::exists(saved_config)) {
    // Resume continues the original run: the saved configuration wins over a changed file, except for
    // --max-steps (extending a run is allowed).
    Json original = read_json_file(saved_config);
    if (o.max_steps > 0) original["training"]["max_steps"] = o.max_steps;
    config = original;
  }
  // Everything is validated (config, model, data, memory, the run directory's state) before the first
  // write: a refused run leaves the directory as it was.
  auto setup = train::make_lm_training(config, o.config, worker.device);
  const train::RunStart start = train::plan_run_start(o.out, train::start_mode(o.resume, o.restart));
  if (worker.writer() && (!o.resume || !fs::exists(saved_config)))
    write_file_atomically(saved_config, config.dump(2) + "\n");
  train::Trainer trainer(*setup.task, setup.trainer, o.out, globals.quiet);
  trainer.set_process_group(worker.group.get());
  auto result = trainer.run(start);
  if (!worker.writer()) return 0;
  Json summary{{"steps", result.steps},
               {"final_loss", result.final_loss},
               {"tokens_per_s", result.tokens_per_second},
               {"skipped_steps", result.skipped_steps},
               {"model_dir", o.out}};
  if (result.final_val_loss >= 0) summary["final_val_loss"] = result.final_val_loss;
  std::cout << summary.dump() << std::endl;
  return 0;
}

}  // namespace

void register_train(CLI::App& app, const GlobalOptions& globals, CommandList& commands) {
  auto o = std::make_shared<TrainOptions>();
  CLI::App* cmd = app.add_subcommand("train", "Train a model (SWAX with stochastic windows, baselines, ...)");
  cmd->add_option("-c,--config", o->config, "Training config (JSON)")->required();
  cmd->add_option("-o,--out", o->out, "Run directory: the final model, checkpoints/, metrics.jsonl")->required();
  cmd->add_option("--max-steps", o->max_steps, "Override training.max_steps");
  CLI::Option* resume = cmd->add_flag("--resume", o->resume, "Continue from the latest valid checkpoint in --out");
  cmd->add_flag("--restart", o->restart,
                "With --resume: when --out holds no valid checkpoint, start again from step 0 (broken checkpoints "
                "are set aside, never deleted)")
      ->needs(resume);
  cmd->add_flag("--detect-anomaly", o->detect_anomaly, "Fail at the first NaN in backward, naming its forward op (slow)");
  cmd->add_option("--device", o->device, "cpu, cuda or cuda:N")->capture_default_str();
  add_distributed_options(cmd, o->distributed);
  commands.push_back({cmd, [o, &globals]() { return run_train(*o, globals); }});
}

}  // namespace swarmt::cli
