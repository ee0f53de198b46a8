#include "swarmt/nn/linear.h"

#include <ATen/CPUGeneratorImpl.h>

#include "swarmt/nn/init.h"

namespace swarmt::nn {
namespace {

// The 1 × 1 modules below still draw their own one or two values; building a model to load it should
// not move the random stream a user seeded, so the default generator's state is put back.
class KeepGeneratorState {
 public:
  KeepGeneratorState() : generator_(at::detail::getDefaultCPUGenerator()), state_(generator_.get_state()) {}
  ~KeepGeneratorState() { generator_.set_state(state_); }
  KeepGeneratorState(const KeepGeneratorState&) = delete;
  KeepGeneratorState& operator=(const KeepGeneratorState&) = delete;

 private:
  at::Generator generator_;
  at::Tensor state_;
};

}  // namespace

// Skipping: a 1 × 1 module (its constructor's draw costs nothing), whose parameters then take their
// real shape in place; set_ keeps the parameter objects the module registered, so names, order and
// requires_grad are those of the ordinary construction.
torch::nn::Linear linear_layer(int64_t in, int64_t out, bool bias) {
  if (!random_init_skipped()) return torch::nn::Linear(torch::nn::LinearOptions(in, out).bias(bias));
  torch::nn::Linear layer = [bias] {
    KeepGeneratorState keep;
    return torch::nn::Linear(torch::nn::LinearOptions(1, 1).bias(bias));
  }();
  at::NoGradGuard no_grad;
  layer->weight.set_(at::empty({out, in}, layer->weight.options()));
  if (bias) layer->bias.set_(at::empty({out}, layer->bias.options()));
  layer->options = torch::nn::LinearOptions(in, out).bias(bias);
  return layer;
}

torch::nn::Embedding embedding_layer(int64_t count, int64_t dim) {
  if (!random_init_skipped()) return torch::nn::Embedding(count, dim);
  torch::nn::Embedding layer = [] {
    KeepGeneratorState keep;
    return torch::nn::Embedding(1, 1);
  }();
  at::NoGradGuard no_grad;
  layer->weight.set_(at::empty({count, dim}, layer->weight.options()));
  layer->options = torch::nn::EmbeddingOptions(count, dim);
  return layer;
}

}  // namespace swarmt::nn
