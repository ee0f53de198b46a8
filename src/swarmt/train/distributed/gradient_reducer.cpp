#include "swarmt/train/distributed/gradient_reducer.h"

#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/function_hook.h>
#include <torch/csrc/autograd/variable.h>

#include <mutex>

#include "swarmt/core/error.h"

namespace swarmt::train::distributed {

// A named namespace, not an anonymous one: GradientReducer::State (external linkage) holds Buckets.
namespace gradient_reducer_detail {

struct Bucket {
  std::vector<size_t> params;  // indices into State::params
  int64_t numel = 0;
  int64_t ready = 0;           // parameters of the bucket whose gradient is complete
  at::Tensor flat;             // the gradients, concatenated, being reduced
  std::unique_ptr<PendingCollective> pending;
};

}  // namespace gradient_reducer_detail

using gradient_reducer_detail::Bucket;

struct GradientReducer::State {
  ProcessGroup* group = nullptr;
  std::vector<at::Tensor> params;
  std::vector<size_t> bucket_of;
  std::vector<bool> ready;
  std::vector<Bucket> buckets;
  size_t next_launch = 0;  // buckets [0, next_launch) are launched
  bool armed = false;
  bool reentrant = false;
  int64_t overlapped = 0;
  std::mutex mutex;
  std::vector<std::shared_ptr<torch::autograd::Node>> accumulators;  // kept alive, or the hooks would vanish
  std::vector<uintptr_t> hook_keys;

  // Starts the all-reduce of bucket b from the current gradients.
  void launch(Bucket& b) {
    const at::Tensor& first = params[b.params.front()];
    b.flat = at::empty({b.numel}, first.options());
    int64_t offset = 0;
    for (size_t i : b.params) {
      const at::Tensor& p = params[i];
      at::Tensor slice = b.flat.narrow(0, offset, p.numel());
      if (p.grad().defined()) {
        slice.copy_(p.grad().reshape(-1));
      } else {
        slice.zero_();
      }
      offset += p.numel();
    }
    b.pending = group->allreduce_sum_async(b.flat);
  }

  // Called by the hook of parameter i after its gradient has been accumulated.
  void mark_ready(size_t i) {
    std::lock_guard<std::mutex> lock(mutex);
    if (!armed) return;
    if (ready[i]) {  // a second accumulation within one backward: see the header
      reentrant = true;
      return;
    }
    ready[i] = true;
    ++buckets[bucket_of[i]].ready;
    while (next_launch < buckets.size() &&
           buckets[next_launch].ready == static_cast<int64_t>(buckets[next_launch].params.size())) {
      launch(buckets[next_launch++]);
      ++overlapped;
    }
  }
};

namespace {

class ReadyHook : public torch::autograd::FunctionPostHook {
 public:
  ReadyHook(std::weak_ptr<GradientReducer::State> state, size_t index) : state_(std::move(state)), index_(index) {}
  torch::autograd::variable_list operator()(const torch::autograd::variable_list& outputs,
                                            const torch::autograd::variable_list& /*inputs*/) override {
    if (auto state = state_.lock()) state->mark_ready(index_);
    return outputs;
  }

 private:
  std::weak_ptr<GradientReducer::State> state_;
  size_t index_;
};

}  // namespace

GradientReducer::GradientReducer(ProcessGroup& group, std::vector<at::Tensor> parameters, int64_t bucket_bytes)
    : state_(std::make_shared<State>()) {
  SWARMT_CHECK(bucket_bytes > 0);
  auto& s = *state_;
  s.group = &group;
  s.params = std::move(parameters);
  s.bucket_of.assign(s.params.size(), 0);
  s.ready.assign(s.params.size(), false);
  // Reverse order: backward reaches the last layers first. A bucket holds one dtype and device.
  int64_t bytes = 0;
  for (size_t k = s.params.size(); k-- > 0;) {
    const at::Tensor& p = s.params[k];
    SWARMT_CHECK(p.requires_grad(), "GradientReducer: parameter ", k, " does not require grad");
    const int64_t size = p.numel() * static_cast<int64_t>(p.element_size());
    const bool new_bucket = s.buckets.empty() || bytes + size > bucket_bytes ||
                            s.params[s.buckets.back().params.front()].options().dtype() != p.options().dtype() ||
                            s.params[s.buckets.back().params.front()].device() != p.device();
    if (new_bucket) {
      s.buckets.emplace_back();
      bytes = 0;
    }
    s.buckets.back().params.push_back(k);
    s.buckets.back().numel += p.numel();
    s.bucket_of[k] = s.buckets.size() - 1;
    bytes += size;
  }
  for (size_t k = 0; k < s.params.size(); ++k) {
    auto accumulator = torch::autograd::impl::grad_accumulator(s.params[k]);
    SWARMT_CHECK(accumulator != nullptr, "GradientReducer: parameter ", k, " is not a leaf");
    s.hook_keys.push_back(accumulator->add_post_hook(std::make_unique<ReadyHook>(state_, k)));
    s.accumulators.push_back(std::move(accumulator));
  }
}

GradientReducer::~GradientReducer() {
  for (size_t k = 0; k < state_->accumulators.size(); ++k) state_->accumulators[k]->del_post_hook(state_->hook_keys[k]);
}

void GradientReducer::prepare_for_backward() {
  std::lock_guard<std::mutex> lock(state_->mutex);
  auto& s = *state_;
  s.ready.assign(s.params.size(), false);
  for (auto& b : s.buckets) {
    b.ready = 0;
    b.pending.reset();
  }
  s.next_launch = 0;
  s.overlapped = 0;
  s.reentrant = false;
  s.armed = true;
}

void GradientReducer::finish() {
  std::lock_guard<std::mutex> lock(state_->mutex);
  auto& s = *state_;
  s.armed = false;
  while (s.next_launch < s.buckets.size()) s.launch(s.buckets[s.next_launch++]);
  // Which parameters have a gradient on any rank. One that none reached (memory layers while the ARMT
  // curriculum runs one segment) keeps no gradient, as in one process, so AdamW leaves it alone.
  at::Tensor reached = at::zeros({static_cast<int64_t>(s.params.size())}, at::kFloat);
  for (size_t i = 0; i < s.params.size(); ++i)
    if (s.params[i].grad().defined()) reached[static_cast<int64_t>(i)] = 1.0f;
  at::Tensor reached_anywhere = reached.to(s.params.front().device());
  s.group->allreduce_sum(reached_anywhere);
  reached = reached_anywhere.cpu();
  for (auto& b : s.buckets) b.pending->wait();
  if (s.reentrant) {
    // Some gradients changed after their bucket was sent: reduce everything again from the final ones.
    // Every rank runs the same graph, so every rank takes this branch at the same step.
    for (auto& b : s.buckets) s.launch(b);
    for (auto& b : s.buckets) b.pending->wait();
  }
  for (auto& b : s.buckets) {
    int64_t offset = 0;
    for (size_t i : b.params) {
      at::Tensor& p = s.params[i];
      at::Tensor sum = b.flat.narrow(0, offset, p.numel()).view_as(p);
      if (reached[static_cast<int64_t>(i)].item<float>() == 0.0f) {
        // no rank computed a gradient: leave it undefined
      } else if (p.grad().defined()) {
        p.mutable_grad().copy_(sum);
      } else {
        p.mutable_grad() = sum.clone();
      }
      offset += p.numel();
    }
    b.pending.reset();
  }
}

int64_t GradientReducer::num_buckets() const { return static_cast<int64_t>(state_->buckets.size()); }
int64_t GradientReducer::buckets_overlapped() const { return state_->reentrant ? 0 : state_->overlapped; }
bool GradientReducer::last_backward_was_reentrant() const { return state_->reentrant; }

}  // namespace swarmt::train::distributed
