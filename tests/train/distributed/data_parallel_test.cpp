// Data-parallel training on c10d/Gloo over loopback, through the real binary: 2 processes with global
// batch B must train exactly like 1 process with batch B (same losses, same final weights) for a SWAX
// model with stochastic windows and for an ARMT model with its segment curriculum; resume works with a
// different number of processes; a rank that dies makes the others fail with a clear error, not hang.
#include <gtest/gtest.h>

#include <cmath>

#include "swarmt/core/json.h"
#include "swarmt/core/safetensors_torch.h"
#include "swarmt/train/distributed/gradient_reducer.h"
#include "swarmt/train/distributed/launcher.h"
#include "test_util.h"
#include "train/record_losses.h"

namespace swarmt {
namespace {

using testing::run_shell;
using testing::run_swarmt;
using testing::TempDir;
using testing::write_file;

constexpr const char* kSwaxConfig = R"({
  "model": {"hidden_size": 32, "layer_pattern": "MS", "num_hidden_layers": 2, "num_attention_heads": 2,
            "head_dim": 16, "sliding_window": 32, "mlstm_num_heads": 2, "mlstm_qk_head_dim": 8,
            "mlstm_v_head_dim": 16, "intermediate_size": 64},
  "sequence_length": 64,
  "data": {"train": {"type": "synthetic", "loss": "all", "tasks": [{"task": "essay"}]},
           "validation": {"type": "synthetic", "loss": "all", "tasks": [{"task": "essay"}], "seed": 9}},
  "window_schedule": {"type": "stochastic", "short_window": 8, "long_window": 32, "p_short": 0.5},
  "training": {"max_steps": 20, "batch_size": 4, "log_every": 1, "eval_every": 10, "eval_batches": 3,
               "checkpoint_every": 10, "optimizer": {"lr": 0.003}, "seed": 5}
})";

// Same losses (up to the order of float sums over ranks) and same final weights.
void expect_same_training(const std::string& one, const std::string& two, int64_t steps) {
  const auto reference = testing::logged_losses(one);
  const auto losses = testing::logged_losses(two);
  ASSERT_EQ(reference.size(), static_cast<size_t>(steps));
  ASSERT_EQ(losses.size(), reference.size());
  for (const auto& [step, loss] : reference) EXPECT_NEAR(losses.at(step), loss, 1e-4 * std::abs(loss)) << "step " << step;
  const auto a = load_safetensors(one + "/model.safetensors");
  const auto b = load_safetensors(two + "/model.safetensors");
  ASSERT_EQ(a.size(), b.size());
  for (const auto& [name, tensor] : a) EXPECT_TENSORS_CLOSE(b.at(name), tensor, 1e-4) << name;
}

TEST(DataParallel, two_processes_train_a_swax_model_like_one_process_with_the_same_global_batch) {
  TempDir tmp;
  write_file(tmp.file("train.json"), kSwaxConfig);
  auto r = run_swarmt("-q train --config " + tmp.file("train.json") + " --out " + tmp.file("one"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run_swarmt("-q train --nproc-per-node 2 --config " + tmp.file("train.json") + " --out " + tmp.file("two"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_same_training(tmp.file("one"), tmp.file("two"), 20);
  // The stochastic windows were the same on both ranks: the log (rank 0's) has the single process's.
  EXPECT_EQ(Json::parse(r.out)["steps"], 20);
  // Validation is split over the ranks and summed: the same loss.
  const Json one_summary = Json::parse(run_shell("tail -n 1 " + tmp.file("one/metrics.jsonl")).out);
  const Json two_summary = Json::parse(run_shell("tail -n 1 " + tmp.file("two/metrics.jsonl")).out);
  EXPECT_NEAR(two_summary["val_loss"].get<double>(), one_summary["val_loss"].get<double>(), 1e-4);
}

// Rank 0 and rank 1 started by hand (as an external launcher would), rank 1 SIGKILLed at its
// `kill_at`-th kill point; rank 1 writes nothing, so its kill points are the ends of its steps.
// `timeout` only guards against a hang. The output ends with "rank 0 exit N".
testing::CommandResult two_ranks_with_rank_1_killed(const std::string& train_args, int64_t kill_at) {
  const std::string port = std::to_string(train::distributed::find_free_port());
  const std::string env = "WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=" + port + " SWARMT_DIST_TIMEOUT=60 ";
  const std::string train = "'" + std::string(SWARMT_BINARY) + "' -q --threads 1 train " + train_args;
  return run_shell("RANK=1 SWARMT_TEST_KILL_AT=" + std::to_string(kill_at) + " " + env + train +
                   " 2>/dev/null & RANK=0 " + env + "timeout 300 " + train + "; echo \"rank 0 exit $?\"; wait");
}

TEST(DataParallel, a_run_resumes_with_a_different_number_of_processes) {
  TempDir tmp;
  write_file(tmp.file("train.json"), kSwaxConfig);
  auto r = run_swarmt("-q train --config " + tmp.file("train.json") + " --out " + tmp.file("one"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // 2 processes until rank 1 dies at the end of step 11 (the last checkpoint is step 10's), then
  // 1 process resumes from step 10. (Stopping with --max-steps 10 instead would change the schedule.)
  r = two_ranks_with_rank_1_killed("--config " + tmp.file("train.json") + " --out " + tmp.file("mixed"), 11);
  ASSERT_NE(r.out.find("rank 0 exit 2"), std::string::npos) << r.out << r.err;
  r = run_swarmt("-q train --resume --config " + tmp.file("train.json") + " --out " + tmp.file("mixed"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_same_training(tmp.file("one"), tmp.file("mixed"), 20);
}

// eps is 1e-3 here, not the default 1e-5. From the 3-segment stage on, memory writes subtract
// Aᵀφ(k) / (zᵀφ(k) + eps), which is ill-conditioned with a small eps where zᵀφ(k) is near 0: float rounding
// differences of 1e-7 grow to different gradients within a step (grad norm 2.35 vs 1.33), and then even
// ONE process with grad_accum 2 departs from one process with grad_accum 1. Two processes did match one
// process with grad_accum 2 there to every printed digit, so the reducer is not the cause.
TEST(DataParallel, two_processes_train_an_armt_model_like_one_process) {
  TempDir tmp;
  write_file(tmp.file("base.json"), R"({"model_type": "llama", "hidden_size": 32, "num_hidden_layers": 2,
      "num_attention_heads": 2, "num_key_value_heads": 2, "head_dim": 16, "intermediate_size": 64,
      "vocab_size": 259, "tie_word_embeddings": true, "bos_token_id": 257, "eos_token_id": 258, "pad_token_id": 256})");
  auto r = run_swarmt("model init " + tmp.file("base.json") + " --out " + tmp.file("base"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Curriculum 1 -> 2 -> 3 segments: every rank must use the step's segment count.
  write_file(tmp.file("train.json"), R"({"armt": {"segment_size": 16, "num_memory_tokens": 2, "d_mem": 8, "eps": 0.001},
    "data": {"train": {"type": "synthetic", "loss": "all", "tasks": [{"task": "essay"}]}},
    "curriculum": {"segments": [1, 2, 3], "steps": [6, 7, 7]},
    "training": {"batch_size": 4, "log_every": 1, "optimizer": {"lr": 0.003}, "seed": 3}})");
  const std::string args = "armt train --base " + tmp.file("base") + " --config " + tmp.file("train.json");
  r = run_swarmt("-q " + args + " --out " + tmp.file("one"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run_swarmt("-q " + args + " --nproc-per-node 2 --out " + tmp.file("two"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_same_training(tmp.file("one"), tmp.file("two"), 20);
}

TEST(DataParallel, a_rank_that_dies_makes_the_others_fail_with_a_clear_error) {
  TempDir tmp;
  write_file(tmp.file("train.json"), kSwaxConfig);
  // Rank 1 dies at the end of step 3.
  auto r = two_ranks_with_rank_1_killed("--config " + tmp.file("train.json") + " --out " + tmp.file("run"), 3);
  EXPECT_NE(r.out.find("rank 0 exit 2"), std::string::npos) << r.out << r.err;  // an error, not the timeout (124)
  EXPECT_NE(r.err.find("distributed training, rank 0 of 2:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("another worker has most likely died"), std::string::npos) << r.err;
}

TEST(DataParallel, the_launcher_reports_a_failed_worker_and_malformed_settings) {
  TempDir tmp;
  write_file(tmp.file("train.json"), kSwaxConfig);
  const std::string train = " train --config " + tmp.file("train.json") + " --out " + tmp.file("run");
  auto r = run_shell("SWARMT_TEST_KILL_AT=2 '" + std::string(SWARMT_BINARY) + "' -q" + train + " --nproc-per-node 2");
  EXPECT_EQ(r.exit_code, 128 + 9) << r.err;  // the status of the worker killed by SIGKILL
  EXPECT_NE(r.err.find("error: worker rank"), std::string::npos) << r.err;
  r = run_swarmt("-q" + train + " --nproc-per-node 0 --nnodes 2");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--nnodes and --node-rank need --nproc-per-node"), std::string::npos) << r.err;
  r = run_swarmt("-q" + train + " --nproc-per-node 2 --nnodes 2 --node-rank 1");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--master-port is required with --nnodes > 1"), std::string::npos) << r.err;
  r = run_shell("WORLD_SIZE=2 RANK=5 '" + std::string(SWARMT_BINARY) + "' -q" + train);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("environment variable RANK=5 must be in [0, 1]"), std::string::npos) << r.err;
  r = run_shell("WORLD_SIZE=3 '" + std::string(SWARMT_BINARY) + "' -q" + train + " --nproc-per-node 2");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("already a worker"), std::string::npos) << r.err;
}

TEST(DataParallel, worker_commands_drop_the_launcher_flags_and_split_the_cores) {
  const std::vector<std::string> argv = {"swarmt", "-q",          "train", "--nproc-per-node", "2",  "--master-port=7",
                                         "--config", "c.json", "--nnodes", "1",  "--out", "o"};
  EXPECT_EQ(train::distributed::worker_command(argv, 3), (std::vector<std::string>{"swarmt", "--threads", "3", "-q", "train",
                                                                      "--config", "c.json", "--out", "o"}));
  EXPECT_EQ(train::distributed::worker_command(argv, 0),
            (std::vector<std::string>{"swarmt", "-q", "train", "--config", "c.json", "--out", "o"}));
}

TEST(DataParallel, the_reducer_buckets_gradients_and_overlaps_them_with_backward) {
  // One rank: the all-reduce is the identity, so the gradients must come back unchanged, and the
  // buckets of a plain graph must have been launched from the backward hooks.
  train::distributed::DistributedEnv env;
  env.world_size = 1;
  env.master_port = train::distributed::find_free_port();
  train::distributed::ProcessGroup group(env, at::kCPU);
  auto w1 = at::randn({64, 64}).requires_grad_(), w2 = at::randn({64, 64}).requires_grad_(),
       w3 = at::randn({64}).requires_grad_();
  train::distributed::GradientReducer reducer(group, {w1, w2, w3}, /*bucket_bytes=*/64 * 64 * 4);
  EXPECT_EQ(reducer.num_buckets(), 3);
  auto x = at::randn({8, 64});
  auto loss = [&] { return (at::tanh(at::tanh(x.matmul(w1)).matmul(w2)) + w3).pow(2).sum(); };
  loss().backward();
  const auto g1 = w1.grad().clone(), g2 = w2.grad().clone(), g3 = w3.grad().clone();
  for (auto* w : {&w1, &w2, &w3}) w->mutable_grad().zero_();
  reducer.prepare_for_backward();
  loss().backward();
  reducer.finish();
  EXPECT_EQ(reducer.buckets_overlapped(), 3);
  EXPECT_FALSE(reducer.last_backward_was_reentrant());
  EXPECT_TENSORS_CLOSE(w1.grad(), g1, 0.0);
  EXPECT_TENSORS_CLOSE(w2.grad(), g2, 0.0);
  EXPECT_TENSORS_CLOSE(w3.grad(), g3, 0.0);
  // Two backward passes into the same gradients before finish (what a nested, per-segment backward
  // does): detected, and the sums are taken again from the final gradients.
  for (auto* w : {&w1, &w2, &w3}) w->mutable_grad().zero_();
  reducer.prepare_for_backward();
  loss().backward();
  loss().backward();
  reducer.finish();
  EXPECT_TRUE(reducer.last_backward_was_reentrant());
  EXPECT_TENSORS_CLOSE(w1.grad(), 2 * g1, 1e-5);
  EXPECT_TENSORS_CLOSE(w3.grad(), 2 * g3, 1e-5);
}

}  // namespace
}  // namespace swarmt
