#include "swarmt/train/trainer.h"

#include <torch/csrc/autograd/anomaly_mode.h>

#include <optional>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "swarmt/core/atomic_file.h"
#include "swarmt/core/checkpoint.h"
#include "swarmt/core/error.h"
#include "swarmt/core/kill_point.h"
#include "swarmt/core/safetensors_torch.h"
#include "swarmt/report/progress_bar.h"
#include "swarmt/train/autocast.h"
#include "swarmt/train/distributed/gradient_reducer.h"

namespace fs = std::filesystem;

namespace swarmt::train {

TrainerOptions TrainerOptions::from_json(const JsonView& v) {
  v.reject_unknown_keys({"max_steps", "batch_size", "grad_accum", "optimizer", "lr_schedule", "clip_grad_norm", "bf16",
                         "eval_every", "eval_batches", "checkpoint_every", "keep_checkpoints", "log_every",
                         "max_bad_steps", "detect_anomaly", "seed"});
  TrainerOptions o;
  o.max_steps = v.get_int_in("max_steps", o.max_steps, 1, int64_t{1} << 40);
  o.batch_size = v.get_int_in("batch_size", o.batch_size, 1, 1 << 20);
  o.grad_accum = v.get_int_in("grad_accum", o.grad_accum, 1, 1 << 20);
  SWARMT_CHECK_INPUT(o.batch_size % o.grad_accum == 0, v.describe("grad_accum"), " (", o.grad_accum,
                     ") must divide batch_size (", o.batch_size, ")");
  if (v.has("optimizer")) {
    JsonView opt = v.object("optimizer");
    opt.reject_unknown_keys({"lr", "beta1", "beta2", "eps", "weight_decay", "decay_embeddings"});
    o.lr = opt.get_number("lr", o.lr);
    SWARMT_CHECK_INPUT(o.lr > 0 && o.lr < 10, opt.describe("lr"), " must be in (0, 10)");
    o.adamw.beta1 = opt.get_number("beta1", o.adamw.beta1);
    o.adamw.beta2 = opt.get_number("beta2", o.adamw.beta2);
    SWARMT_CHECK_INPUT(o.adamw.beta1 >= 0 && o.adamw.beta1 < 1, opt.describe("beta1"), " must be in [0, 1)");
    SWARMT_CHECK_INPUT(o.adamw.beta2 >= 0 && o.adamw.beta2 < 1, opt.describe("beta2"), " must be in [0, 1)");
    o.adamw.eps = opt.get_number("eps", o.adamw.eps);
    SWARMT_CHECK_INPUT(o.adamw.eps > 0, opt.describe("eps"), " must be positive");
    o.adamw.weight_decay = opt.get_number("weight_decay", o.adamw.weight_decay);
    SWARMT_CHECK_INPUT(o.adamw.weight_decay >= 0, opt.describe("weight_decay"), " must be >= 0");
    o.adamw.decay_embeddings = opt.get_bool("decay_embeddings", o.adamw.decay_embeddings);
  }
  if (v.has("lr_schedule")) o.lr_schedule = LrSchedule::from_json(v.object("lr_schedule"));
  o.clip_grad_norm = v.get_number("clip_grad_norm", o.clip_grad_norm);
  SWARMT_CHECK_INPUT(o.clip_grad_norm >= 0, v.describe("clip_grad_norm"), " must be >= 0 (0 disables clipping)");
  o.bf16 = v.get_bool("bf16", o.bf16);
  o.eval_every = v.get_int_in("eval_every", o.eval_every, 0, int64_t{1} << 40);
  o.eval_batches = v.get_int_in("eval_batches", o.eval_batches, 1, 1 << 20);
  o.checkpoint_every = v.get_int_in("checkpoint_every", o.checkpoint_every, 0, int64_t{1} << 40);
  o.keep_checkpoints = v.get_int_in("keep_checkpoints", o.keep_checkpoints, 1, 1 << 20);
  o.log_every = v.get_int_in("log_every", o.log_every, 1, int64_t{1} << 40);
  o.max_bad_steps = v.get_int_in("max_bad_steps", o.max_bad_steps, 1, 1 << 20);
  o.detect_anomaly = v.get_bool("detect_anomaly", o.detect_anomaly);
  o.seed = static_cast<uint64_t>(v.get_int("seed", 0));
  return o;
}

Json TrainerOptions::to_json() const {
  return Json{{"max_steps", max_steps},
              {"batch_size", batch_size},
              {"grad_accum", grad_accum},
              {"optimizer",
               {{"lr", lr},
                {"beta1", adamw.beta1},
                {"beta2", adamw.beta2},
                {"eps", adamw.eps},
                {"weight_decay", adamw.weight_decay},
                {"decay_embeddings", adamw.decay_embeddings}}},
              {"lr_schedule", lr_schedule.to_json()},
              {"clip_grad_norm", clip_grad_norm},
              {"bf16", bf16},
              {"eval_every", eval_every},
              {"eval_batches", eval_batches},
              {"checkpoint_every", checkpoint_every},
              {"keep_checkpoints", keep_checkpoints},
              {"log_every", log_every},
              {"max_bad_steps", max_bad_steps},
              {"detect_anomaly", detect_anomaly},
              {"seed", seed}};
}

Trainer::Trainer(TrainTask& task, TrainerOptions options, std::string run_dir, bool quiet)
    : task_(task), options_(std::move(options)), run_dir_(std::move(run_dir)), quiet_(quiet) {}

namespace {

// Keeps the metrics lines of steps <= `last_step` (resume rewinds the log to the checkpoint).
void truncate_metrics(const std::string& path, int64_t last_step) {
  std::ifstream in(path);
  if (!in.good()) return;
  std::string kept, line;
  while (std::getline(in, line)) {
    try {
      Json j = Json::parse(line);
      if (j.contains("step") && j["step"].is_number_integer() && j["step"].get<int64_t>() <= last_step) kept += line + "\n";
    } catch (const Json::exception&) {
      // A torn last line from a killed run: drop it.
    }
  }
  write_file_atomically(path, kept);
}

}  // namespace

double Trainer::evaluate() {
  if (!task_.has_validation()) return -1.0;
  at::NoGradGuard no_grad;
  AutocastGuard autocast(task_.device().type(), options_.bf16);
  double total = 0.0;
  int64_t count = 0;
  const int64_t rows = std::max<int64_t>(1, options_.batch_size / options_.grad_accum);
  StepPlan plan = task_.plan(options_.max_steps - 1, options_.max_steps);  // evaluate as the model ends training
  // Data parallel: rank r takes batches r, r + W, ...; the sums are then added over ranks.
  const int64_t rank = group_ ? group_->rank() : 0, world = group_ ? group_->world_size() : 1;
  for (int64_t i = rank; i < options_.eval_batches; i += world) {
    auto batch = task_.validation_batch(i, rows);
    auto terms = task_.loss(batch, plan);
    total += terms.sum.item<double>();
    count += terms.count;
  }
  if (group_) {
    auto sums = at::tensor({total, static_cast<double>(count)}, at::kDouble);
    group_->allreduce_sum(sums);
    total = sums[0].item<double>();
    count = static_cast<int64_t>(sums[1].item<double>());
  }
  return count > 0 ? total / static_cast<double>(count) : -1.0;
}

void Trainer::save_checkpoint(int64_t completed_steps, AdamW& optimizer, int64_t tokens_seen) {
  CheckpointWriter writer(checkpoints_dir(run_dir_), completed_steps);
  writer.record("model.safetensors", save_safetensors(writer.path_for("model.safetensors"), task_.checkpoint_tensors()));
  auto opt_state = optimizer.state_tensors();
  opt_state.emplace_back("rng.cpu", at::detail::getDefaultCPUGenerator().get_state());
  writer.record("optimizer.safetensors", save_safetensors(writer.path_for("optimizer.safetensors"), opt_state));
  Json state{{"step", completed_steps},
             {"tokens_seen", tokens_seen},
             {"max_steps", options_.max_steps},
             {"task", task_.describe()},
             {"trainer", options_.to_json()}};
  writer.add_file("trainer_state.json", state.dump(2) + "\n");
  for (const auto& [name, contents] : task_.checkpoint_model_files(writer.target())) writer.add_file(name, contents);
  writer.commit();
  std::vector<std::string> warnings;
  prune_checkpoints(checkpoints_dir(run_dir_), static_cast<int>(options_.keep_checkpoints), &warnings,
                    kTrainerCheckpointFiles);
  for (const auto& w : warnings) std::cerr << "warning: " << w << std::endl;
}

int64_t Trainer::load_checkpoint(const std::string& dir, AdamW& optimizer, int64_t& tokens_seen) {
  Json state = read_json_file(dir + "/trainer_state.json");
  JsonView sv(state, dir + "/trainer_state.json");
  // The model must be the same one the checkpoint was written for.
  SWARMT_CHECK_INPUT(sv.raw("task") == task_.describe(), dir,
                     ": this checkpoint was written for a different model or task configuration; resume with the "
                     "configuration of the original run (see ", run_dir_, "/train_config.json)");
  TensorStore weights = TensorStore::open(dir + "/model.safetensors");
  task_.load_checkpoint_tensors([&](const std::string& n) { return weights.has(n) ? weights.get(n) : at::Tensor(); },
                                weights.path());
  TensorStore opt = TensorStore::open(dir + "/optimizer.safetensors");
  optimizer.load_state_tensors([&](const std::string& n) { return opt.has(n) ? opt.get(n) : at::Tensor(); }, opt.path());
  if (opt.has("rng.cpu")) {
    at::Generator generator = at::detail::getDefaultCPUGenerator();
    generator.set_state(opt.get("rng.cpu").clone());
  }
  tokens_seen = sv.get_int("tokens_seen", 0);
  return sv.get_int("step");
}

TrainResult Trainer::run(bool resume) { return run(plan_run_start(run_dir_, resume ? StartMode::Resume : StartMode::Fresh)); }

TrainResult Trainer::run(const RunStart& start) {
  const int64_t rank = group_ ? group_->rank() : 0, world = group_ ? group_->world_size() : 1;
  const bool writer = rank == 0;  // the one rank that writes metrics, checkpoints and the model
  SWARMT_CHECK_INPUT(options_.batch_size % (world * options_.grad_accum) == 0, "training.batch_size (",
                     options_.batch_size, ") must be divisible by the number of processes (", world,
                     ") times training.grad_accum (", options_.grad_accum, ")");
  if (writer) fs::create_directories(run_dir_);
  auto parameters = task_.trainable_parameters();
  SWARMT_CHECK_INPUT(!parameters.empty(), "nothing to train: every parameter is frozen");
  AdamW optimizer(parameters, options_.adamw);
  const std::string metrics_path = train::metrics_path(run_dir_);

  int64_t start_step = 0, tokens_seen = 0;
  if (writer) {
    for (const auto& w : start.warnings) std::cerr << "warning: " << w << std::endl;
    // Never overwritten by this run's checkpoints of the same steps, never pruned: moved out of the way.
    for (const CheckpointStatus& broken : start.broken)
      std::cerr << "warning: moved broken " << broken.path << " to " << set_aside_broken_checkpoint(broken.path)
                << " (" << broken.problem << ")" << std::endl;
  }
  if (start.checkpoint) start_step = load_checkpoint(start.checkpoint->path, optimizer, tokens_seen);
  if (writer && start.mode != StartMode::Fresh) {
    // The log continues after the checkpoint: steps logged after it (or, starting again from step 0,
    // every step) are dropped, so each step is logged once.
    truncate_metrics(metrics_path, start_step);
    if (!quiet_) {
      if (start.checkpoint) {
        std::cerr << "resuming " << run_dir_ << " from step " << start_step << std::endl;
      } else {
        std::cerr << "no checkpoint in " << checkpoints_dir(run_dir_) << ": starting from step 0" << std::endl;
      }
    }
  } else if (writer) {
    std::error_code ec;
    fs::remove(metrics_path, ec);  // an empty log of a run stopped before its first step
  }

  std::ofstream metrics;
  if (writer) {
    metrics.open(metrics_path, std::ios::app);
    SWARMT_CHECK_INPUT(metrics.good(), metrics_path, ": cannot open for writing");
  }
  // Every rank starts from rank 0's weights (as PyTorch's DDP), and sums its gradients with the others.
  std::vector<at::Tensor> tensors;
  for (const auto& p : parameters) tensors.push_back(p.tensor);
  std::unique_ptr<distributed::GradientReducer> reducer;
  if (group_) {
    at::NoGradGuard no_grad;
    group_->broadcast(tensors, 0);
    reducer = std::make_unique<distributed::GradientReducer>(*group_, tensors);
  }
  ProgressBarOptions bar_options;
  bar_options.quiet = quiet_ || !writer;
  bar_options.unit = "step";
  bar_options.initial = start_step;
  ProgressBar bar(options_.max_steps, "train", bar_options);

  const int64_t rank_rows = options_.batch_size / world, micro_rows = rank_rows / options_.grad_accum;
  TrainResult result;
  double window_tokens = 0, window_seconds = 0;
  int64_t bad_in_a_row = 0;
  auto run_start = std::chrono::steady_clock::now();
  int64_t run_tokens = 0;

  // Debugging aid: autograd records where each op was created and fails at the first backward op that
  // produces NaN, naming the forward op (slow; off by default).
  std::optional<torch::autograd::DetectAnomalyGuard> anomaly;
  if (options_.detect_anomaly) anomaly.emplace();
  for (int64_t step = start_step; step < options_.max_steps; ++step) {
    auto t0 = std::chrono::steady_clock::now();
    const StepPlan plan = task_.plan(step, options_.max_steps);
    std::vector<data::Batch> micro;
    int64_t step_targets = 0, step_tokens = 0;
    for (int64_t m = 0; m < options_.grad_accum; ++m) {
      const int64_t first = step * options_.batch_size + rank * rank_rows + m * micro_rows;
      micro.push_back(task_.train_batch(plan, first, micro_rows));
      step_targets += micro.back().num_target_tokens();
      step_tokens += micro.back().tokens.numel();
    }
    if (group_) {  // the step's loss is a mean over the targets of every rank
      auto counts = at::tensor({static_cast<double>(step_targets), static_cast<double>(step_tokens)}, at::kDouble);
      group_->allreduce_sum(counts);
      step_targets = static_cast<int64_t>(counts[0].item<double>());
      step_tokens = static_cast<int64_t>(counts[1].item<double>());
    }
    optimizer.zero_grad();
    double loss_sum = 0.0;
    {
      AutocastGuard autocast(task_.device().type(), options_.bf16);
      for (size_t m = 0; m < micro.size(); ++m) {
        if (reducer && m + 1 == micro.size()) reducer->prepare_for_backward();
        auto terms = task_.loss(micro[m], plan);
        if (terms.count == 0) continue;
        auto scaled = terms.sum / static_cast<double>(std::max<int64_t>(1, step_targets));
        scaled.backward();
        loss_sum += terms.sum.item<double>();
      }
    }
    if (reducer) {
      reducer->finish();
      auto sum = at::tensor({loss_sum}, at::kDouble);
      group_->allreduce_sum(sum);
      loss_sum = sum.item<double>();
    }
    const double loss = step_targets > 0 ? loss_sum / static_cast<double>(step_targets) : 0.0;
    const double grad_norm = clip_grad_norm(parameters, options_.clip_grad_norm);
    const double lr = options_.lr * (plan.lr_multiplier >= 0 ? plan.lr_multiplier
                                                             : options_.lr_schedule.multiplier(step, options_.max_steps));
    const bool finite = std::isfinite(loss) && std::isfinite(grad_norm);
    if (finite) {
      optimizer.step(lr);
      bad_in_a_row = 0;
    } else {
      // Numerics guard: never apply a non-finite update; stop if it keeps happening.
      ++result.skipped_steps;
      ++bad_in_a_row;
      optimizer.zero_grad();
      std::cerr << "warning: step " << step << ": non-finite " << (std::isfinite(loss) ? "gradient" : "loss")
                << "; update skipped" << std::endl;
      SWARMT_CHECK_INPUT(bad_in_a_row < options_.max_bad_steps, "training stopped: ", bad_in_a_row,
                         " consecutive steps with non-finite loss or gradients (last at step ", step,
                         "); lower the learning rate or check the data");
    }
    tokens_seen += step_tokens;
    run_tokens += step_tokens;
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    window_tokens += static_cast<double>(step_tokens);
    window_seconds += seconds;
    result.final_loss = loss;
    if (on_step) on_step(step, loss);

    const int64_t done = step + 1;
    kill_point("train step");
    if (writer && (done % options_.log_every == 0 || done == options_.max_steps || !finite)) {  // skipped steps always
      Json line{{"step", done},      {"loss", loss},         {"lr", lr},
                {"grad_norm", grad_norm}, {"tokens", tokens_seen}, {"tokens_per_s", window_tokens / std::max(1e-9, window_seconds)},
                {"skipped", !finite}};
      const Json plan_json = plan.to_json();
      for (auto it = plan_json.begin(); it != plan_json.end(); ++it) line[it.key()] = it.value();
      metrics << line.dump() << "\n";
      metrics.flush();
      window_tokens = window_seconds = 0;
    }
    ProgressFields fields{{"loss", format_progress_value(loss)}, {"lr", format_progress_value(lr)}};
    if (plan.window > 0) fields.emplace_back("window", std::to_string(plan.window));
    if (plan.num_segments > 0) fields.emplace_back("segments", std::to_string(plan.num_segments));
    double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - run_start).count();
    fields.emplace_back("tok/s", format_progress_value(static_cast<double>(run_tokens) / std::max(1e-9, elapsed)));
    bar.update(done, fields);

    if (options_.eval_every > 0 && done % options_.eval_every == 0 && done != options_.max_steps) {
      double val = evaluate();
      if (val >= 0 && writer) {
        metrics << Json{{"step", done}, {"val_loss", val}}.dump() << "\n";
        metrics.flush();
      }
    }
    if (writer && options_.checkpoint_every > 0 && done % options_.checkpoint_every == 0 && done != options_.max_steps)
      save_checkpoint(done, optimizer, tokens_seen);
  }
  bar.finish();

  result.steps = options_.max_steps;
  result.final_val_loss = evaluate();
  if (result.final_val_loss >= 0 && writer) {
    metrics << Json{{"step", options_.max_steps}, {"val_loss", result.final_val_loss}}.dump() << "\n";
    metrics.flush();
  }
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - run_start).count();
  result.tokens_per_second = static_cast<double>(run_tokens) / std::max(1e-9, elapsed);
  if (writer) {
    if (start_step < options_.max_steps) save_checkpoint(options_.max_steps, optimizer, tokens_seen);
    task_.export_model(run_dir_);
  }
  // The others wait for the model to be written, so that "every process exited" means "the run is on disk".
  if (group_) group_->barrier();
  return result;
}

}  // namespace swarmt::train
