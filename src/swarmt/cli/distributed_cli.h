// The data-parallel flags shared by `swarmt train` and `swarmt armt train`:
//   --nproc-per-node N   start N local workers of this command (train/distributed/launcher.h)
//   --nnodes, --node-rank, --master-addr, --master-port   the same launcher on several machines
// A worker (a process started with RANK/WORLD_SIZE in its environment, by this launcher, torchrun or
// srun) joins the process group and trains its shard.
#pragma once

#include <ATen/ATen.h>

#include <memory>
#include <optional>

#include <CLI/CLI.hpp>

#include "swarmt/cli/command.h"
#include "swarmt/train/distributed/launcher.h"
#include "swarmt/train/distributed/process_group.h"

namespace swarmt::cli {

struct DistributedCliOptions {
  train::distributed::LaunchOptions launch;
  int64_t nproc_per_node = 0;  // 0: no launcher (a single process, or a worker started by another launcher)
};

void add_distributed_options(CLI::App* cmd, DistributedCliOptions& options);

// With --nproc-per-node: starts the workers, waits, and returns their exit code. Otherwise nullopt, and
// the caller trains in this process.
std::optional<int> launch_if_requested(const DistributedCliOptions& options, const GlobalOptions& globals);

// A worker's process group from the environment, or nullptr when this is a single process. `device` is
// resolved for the worker first (plain "cuda" becomes cuda:LOCAL_RANK).
struct WorkerSetup {
  at::Device device{at::kCPU};
  std::unique_ptr<train::distributed::ProcessGroup> group;
  bool writer() const { return group == nullptr || group->rank() == 0; }
};
WorkerSetup join_process_group(const at::Device& requested);

}  // namespace swarmt::cli
