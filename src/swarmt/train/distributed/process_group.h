// Data-parallel communication on libtorch's c10d: the process groups PyTorch itself uses (Gloo for CPU
// tensors, NCCL for CUDA tensors), joined through a TCP store.
//
// Rendezvous follows torchrun and cluster schedulers: every worker reads RANK, WORLD_SIZE, LOCAL_RANK,
// MASTER_ADDR and MASTER_PORT; rank 0 hosts the TCP store at MASTER_ADDR:MASTER_PORT and the others
// connect to it. A run without WORLD_SIZE (or with WORLD_SIZE=1) is a single process and needs none of
// this.
//
// Every collective is bounded by a timeout (SWARMT_DIST_TIMEOUT seconds, default 600): a rank that dies
// or hangs makes the others fail with an error naming the operation and the timeout, never wait forever.
// A dead peer usually closes its sockets, and then the others fail at once.
//
// c10d types stay inside the .cpp, so including this header costs nothing and a build without c10d
// (SWARMT_DISTRIBUTED=OFF) still compiles every caller; it then refuses WORLD_SIZE > 1 with a message.
#pragma once

#include <ATen/ATen.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace swarmt::train::distributed {

struct DistributedEnv {
  int64_t rank = 0;
  int64_t world_size = 1;
  int64_t local_rank = 0;  // index on this node (chooses the GPU: cuda:<local_rank>)
  std::string master_addr = "127.0.0.1";
  int64_t master_port = 29500;
  std::chrono::milliseconds timeout{600'000};
  bool active() const { return world_size > 1; }
};

// The environment of this process; BadInput naming the variable when one is malformed or inconsistent
// (RANK outside [0, WORLD_SIZE), a port outside 1..65535, ...).
DistributedEnv read_distributed_env();

// The device a worker trains on: `requested` as given, except that a plain "cuda" means
// cuda:<LOCAL_RANK> in a distributed run (one GPU per local worker).
at::Device worker_device(const at::Device& requested, const DistributedEnv& env);

// An all-reduce in flight; wait() blocks until the result is in the tensor (or throws the group's error).
class PendingCollective {
 public:
  virtual ~PendingCollective() = default;
  virtual void wait() = 0;
};

class ProcessGroup {
 public:
  // Joins the group of env.world_size processes; tensors of collectives live on `device`.
  ProcessGroup(const DistributedEnv& env, const at::Device& device);
  ~ProcessGroup();
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  int64_t rank() const { return env_.rank; }
  int64_t world_size() const { return env_.world_size; }
  const DistributedEnv& env() const { return env_; }

  // Sum over ranks, in place. The async form returns at once; the tensor must stay alive until wait().
  std::unique_ptr<PendingCollective> allreduce_sum_async(at::Tensor tensor);
  void allreduce_sum(at::Tensor tensor);
  // Copies rank `root`'s tensors to every rank, in place.
  void broadcast(std::vector<at::Tensor> tensors, int64_t root = 0);
  void barrier();

 private:
  struct Impl;
  DistributedEnv env_;
  std::unique_ptr<Impl> impl_;
};

// Rethrows a failure of collective `what` as an error that says which rank saw it and what it most
// likely means (a peer died or timed out). Used by the implementation and by PendingCollective.
[[noreturn]] void throw_collective_error(const DistributedEnv& env, const std::string& what, const std::string& cause);

}  // namespace swarmt::train::distributed
