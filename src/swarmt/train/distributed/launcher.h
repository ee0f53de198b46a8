// The built-in launcher: `swarmt train --nproc-per-node N ...` starts N workers of the same command on
// this machine, as torchrun does, so that one machine needs no external launcher.
//
// Each worker gets RANK = node_rank · N + local_rank, WORLD_SIZE = nnodes · N, LOCAL_RANK,
// LOCAL_WORLD_SIZE, MASTER_ADDR and MASTER_PORT, and --threads cores/N unless the command sets --threads
// (N workers each using every core would oversubscribe the machine). On several nodes, run the launcher
// once per node with the same --nnodes, --master-addr and --master-port and each node's --node-rank;
// or start the workers with any launcher that sets the same variables (torchrun, srun).
//
// When a worker fails, the launcher stops the others (SIGTERM, then SIGKILL after a grace period) and
// exits with the failed worker's status; it forwards SIGINT and SIGTERM to the workers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace swarmt::train::distributed {

struct LaunchOptions {
  int64_t nproc_per_node = 1;
  int64_t nnodes = 1;
  int64_t node_rank = 0;
  std::string master_addr = "127.0.0.1";
  int64_t master_port = 0;  // 0: a free port of this machine (single node only)
  int64_t threads_per_worker = 0;  // 0: keep the command's own --threads
};

// Validates the options (BadInput naming the flag).
void check_launch_options(const LaunchOptions& options);

// The command line of a worker: `argv` without the launcher's own flags (--nproc-per-node, --nnodes,
// --node-rank, --master-addr, --master-port, in "--flag value" or "--flag=value" form), with
// "--threads T" inserted after the program name when threads > 0.
std::vector<std::string> worker_command(const std::vector<std::string>& argv, int64_t threads);

// Runs the workers and waits for them; returns 0 when all succeed, else the first failure's exit code
// (128 + signal for a worker killed by a signal).
int launch_workers(const std::vector<std::string>& argv, const LaunchOptions& options);

// A TCP port that is free on this machine now.
int64_t find_free_port();

}  // namespace swarmt::train::distributed
