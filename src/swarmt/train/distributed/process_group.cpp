#include "swarmt/train/distributed/process_group.h"

#include <cstdlib>
#include <functional>

#include "swarmt/core/error.h"

#ifdef SWARMT_WITH_C10D
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#ifdef SWARMT_WITH_NCCL
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif
#endif

namespace swarmt::train::distributed {

namespace {

// An integer environment variable in [lo, hi], or `fallback` when unset or empty.
int64_t env_int(const char* name, int64_t fallback, int64_t lo, int64_t hi) {
  const char* raw = std::getenv(name);
  if (raw == nullptr || *raw == '\0') return fallback;
  char* end = nullptr;
  const long long value = std::strtoll(raw, &end, 10);
  SWARMT_CHECK_INPUT(end != raw && *end == '\0', "environment variable ", name, "='", raw, "' is not an integer");
  SWARMT_CHECK_INPUT(value >= lo && value <= hi, "environment variable ", name, "=", value, " must be in [", lo, ", ",
                     hi, "]");
  return value;
}

}  // namespace

DistributedEnv read_distributed_env() {
  DistributedEnv env;
  env.world_size = env_int("WORLD_SIZE", 1, 1, 1 << 20);
  if (env.world_size == 1) return env;
  SWARMT_CHECK_INPUT(std::getenv("RANK") != nullptr, "WORLD_SIZE=", env.world_size,
                     " is set but RANK is not: every worker needs its RANK (0..", env.world_size - 1, ")");
  env.rank = env_int("RANK", 0, 0, env.world_size - 1);
  env.local_rank = env_int("LOCAL_RANK", env.rank, 0, env.world_size - 1);
  if (const char* addr = std::getenv("MASTER_ADDR"); addr != nullptr && *addr != '\0') env.master_addr = addr;
  env.master_port = env_int("MASTER_PORT", env.master_port, 1, 65535);
  env.timeout = std::chrono::milliseconds(1000 * env_int("SWARMT_DIST_TIMEOUT", 600, 1, 7 * 24 * 3600));
  return env;
}

at::Device worker_device(const at::Device& requested, const DistributedEnv& env) {
  if (requested.is_cuda() && !requested.has_index() && env.active())
    return at::Device(at::kCUDA, static_cast<c10::DeviceIndex>(env.local_rank));
  return requested;
}

void throw_collective_error(const DistributedEnv& env, const std::string& what, const std::string& cause) {
  throw_input_error("distributed training, rank ", env.rank, " of ", env.world_size, ": ", what, " failed: ", cause,
                    "\n  another worker has most likely died or stopped responding (collectives time out after ",
                    env.timeout.count() / 1000, " s; SWARMT_DIST_TIMEOUT sets it); see that worker's error above");
}

#ifdef SWARMT_WITH_C10D

// The collectives of the concrete group. libtorch 1.x derives ProcessGroupGloo/NCCL from ProcessGroup and
// 2.x from Backend, so the group is held through these calls rather than through a base class.
struct ProcessGroup::Impl {
  c10::intrusive_ptr<c10d::Store> store;
  std::function<c10::intrusive_ptr<c10d::Work>(std::vector<at::Tensor>&)> allreduce;
  std::function<c10::intrusive_ptr<c10d::Work>(std::vector<at::Tensor>&, const c10d::BroadcastOptions&)> broadcast;
  std::function<c10::intrusive_ptr<c10d::Work>()> barrier;

  template <typename Group>
  void bind(c10::intrusive_ptr<Group> group) {
    allreduce = [group](std::vector<at::Tensor>& t) { return group->allreduce(t); };
    broadcast = [group](std::vector<at::Tensor>& t, const c10d::BroadcastOptions& o) { return group->broadcast(t, o); };
    barrier = [group]() { return group->barrier(); };
  }
};

namespace {

std::shared_ptr<::gloo::transport::Device> gloo_device(const DistributedEnv& env) {
  // As PyTorch: GLOO_SOCKET_IFNAME picks the interface; a loopback master means a single machine;
  // otherwise the address this host's name resolves to.
  if (const char* ifname = std::getenv("GLOO_SOCKET_IFNAME"); ifname != nullptr && *ifname != '\0')
    return c10d::ProcessGroupGloo::createDeviceForInterface(ifname);
  if (env.master_addr == "127.0.0.1" || env.master_addr == "localhost")
    return c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1");
  return c10d::ProcessGroupGloo::createDefaultDevice();
}

class C10dPending : public PendingCollective {
 public:
  C10dPending(c10::intrusive_ptr<c10d::Work> work, const DistributedEnv& env, std::string what)
      : work_(std::move(work)), env_(env), what_(std::move(what)) {}
  void wait() override {
    try {
      work_->wait();
    } catch (const std::exception& e) {
      throw_collective_error(env_, what_, e.what());
    }
  }

 private:
  c10::intrusive_ptr<c10d::Work> work_;
  DistributedEnv env_;
  std::string what_;
};

}  // namespace

ProcessGroup::ProcessGroup(const DistributedEnv& env, const at::Device& device) : env_(env), impl_(new Impl) {
  const std::string where = str_cat(env.master_addr, ":", env.master_port);
  try {
    c10d::TCPStoreOptions options;
    options.port = static_cast<std::uint16_t>(env.master_port);
    options.isServer = env.rank == 0;
    options.numWorkers = static_cast<std::size_t>(env.world_size);
    options.waitWorkers = true;
    options.timeout = env.timeout;
    impl_->store = c10::make_intrusive<c10d::TCPStore>(env.master_addr, options);
  } catch (const std::exception& e) {
    throw_input_error("distributed training, rank ", env.rank, " of ", env.world_size, ": rendezvous at ", where,
                      " (MASTER_ADDR:MASTER_PORT) failed: ", e.what(),
                      "\n  rank 0 hosts it; check that every worker has the same address and port, the port is free "
                      "and reachable, and all ", env.world_size, " workers started");
  }
  try {
    if (device.is_cuda()) {
#ifdef SWARMT_WITH_NCCL
      auto options = c10d::ProcessGroupNCCL::Options::create();
      options->timeout = env.timeout;
      impl_->bind(c10::make_intrusive<c10d::ProcessGroupNCCL>(impl_->store, static_cast<int>(env.rank),
                                                              static_cast<int>(env.world_size), options));
      return;
#endif
    }
    auto options = c10d::ProcessGroupGloo::Options::create(env.timeout);
    options->devices.push_back(gloo_device(env));
    options->threads = 2;
    impl_->bind(c10::make_intrusive<c10d::ProcessGroupGloo>(impl_->store, static_cast<int>(env.rank),
                                                            static_cast<int>(env.world_size), options));
  } catch (const std::exception& e) {
    throw_collective_error(env, str_cat("creating the ", device.is_cuda() ? "NCCL" : "Gloo", " process group"), e.what());
  }
}

ProcessGroup::~ProcessGroup() = default;

std::unique_ptr<PendingCollective> ProcessGroup::allreduce_sum_async(at::Tensor tensor) {
  std::vector<at::Tensor> tensors{std::move(tensor)};
  try {
    return std::make_unique<C10dPending>(impl_->allreduce(tensors), env_, "all-reduce");
  } catch (const std::exception& e) {
    throw_collective_error(env_, "all-reduce", e.what());
  }
}

void ProcessGroup::allreduce_sum(at::Tensor tensor) { allreduce_sum_async(std::move(tensor))->wait(); }

void ProcessGroup::broadcast(std::vector<at::Tensor> tensors, int64_t root) {
  c10d::BroadcastOptions options;
  options.rootRank = root;
  for (auto& t : tensors) {
    std::vector<at::Tensor> one{t};
    try {
      C10dPending(impl_->broadcast(one, options), env_, "broadcast").wait();
    } catch (const swarmt::Error&) {
      throw;
    } catch (const std::exception& e) {
      throw_collective_error(env_, "broadcast", e.what());
    }
  }
}

void ProcessGroup::barrier() {
  try {
    C10dPending(impl_->barrier(), env_, "barrier").wait();
  } catch (const swarmt::Error&) {
    throw;
  } catch (const std::exception& e) {
    throw_collective_error(env_, "barrier", e.what());
  }
}

#else  // built without c10d

struct ProcessGroup::Impl {};

ProcessGroup::ProcessGroup(const DistributedEnv& env, const at::Device&) : env_(env) {
  throw_input_error("WORLD_SIZE=", env.world_size,
                    ": this swarmt was built without distributed training (configure with -DSWARMT_DISTRIBUTED=ON "
                    "and libgloo-dev installed)");
}
ProcessGroup::~ProcessGroup() = default;
std::unique_ptr<PendingCollective> ProcessGroup::allreduce_sum_async(at::Tensor) { return nullptr; }
void ProcessGroup::allreduce_sum(at::Tensor) {}
void ProcessGroup::broadcast(std::vector<at::Tensor>, int64_t) {}
void ProcessGroup::barrier() {}

#endif

}  // namespace swarmt::train::distributed
