#include "swarmt/cli/distributed_cli.h"

#include <algorithm>
#include <cstdlib>

#include "swarmt/core/error.h"
#include "swarmt/core/threads.h"

namespace swarmt::cli {

void add_distributed_options(CLI::App* cmd, DistributedCliOptions& o) {
  cmd->add_option("--nproc-per-node", o.nproc_per_node,
                  "Data parallel: start N workers on this machine (CPU processes, or one per GPU)");
  cmd->add_option("--nnodes", o.launch.nnodes, "Machines taking part (run the launcher on each)")->capture_default_str();
  cmd->add_option("--node-rank", o.launch.node_rank, "This machine's index in [0, --nnodes)")->capture_default_str();
  cmd->add_option("--master-addr", o.launch.master_addr, "Address of the machine of rank 0")->capture_default_str();
  cmd->add_option("--master-port", o.launch.master_port, "Rendezvous port on --master-addr (default: a free port)");
}

std::optional<int> launch_if_requested(const DistributedCliOptions& o, const GlobalOptions& globals) {
  if (o.nproc_per_node <= 0) {
    SWARMT_CHECK_INPUT(o.launch.nnodes == 1 && o.launch.node_rank == 0,
                       "--nnodes and --node-rank need --nproc-per-node (workers per machine)");
    return std::nullopt;
  }
  SWARMT_CHECK_INPUT(std::getenv("WORLD_SIZE") == nullptr,
                     "--nproc-per-node was given to a process that is already a worker (WORLD_SIZE is set); start "
                     "either the built-in launcher or an external one, not both");
  train::distributed::LaunchOptions launch = o.launch;
  launch.nproc_per_node = o.nproc_per_node;
  // N workers that each use every core would fight over them: split the cores unless --threads or
  // OMP_NUM_THREADS says (each worker inherits both; OMP_NUM_THREADS counts per worker, as with torchrun).
  const bool threads_given = globals.threads > 0 || thread_count_set_by_env();
  launch.threads_per_worker =
      threads_given ? 0 : std::max<int64_t>(1, available_cores() / std::max<int64_t>(1, o.nproc_per_node));
  return train::distributed::launch_workers(globals.argv, launch);
}

WorkerSetup join_process_group(const at::Device& requested) {
  WorkerSetup setup;
  const train::distributed::DistributedEnv env = train::distributed::read_distributed_env();
  setup.device = train::distributed::worker_device(requested, env);
  if (env.active()) setup.group = std::make_unique<train::distributed::ProcessGroup>(env, setup.device);
  return setup;
}

}  // namespace swarmt::cli
