// AdamW with decoupled weight decay (Loshchilov & Hutter) and named parameter groups.
//
//   m <- β1 m + (1-β1) g;   v <- β2 v + (1-β2) g²
//   p <- p - lr·wd·p - lr · (m / (1-β1^t)) / (sqrt(v / (1-β2^t)) + eps)
//
// Written here rather than taken from torch::optim so that its state is addressed by parameter *name*
// (checkpoints stay readable and survive a change of process count), and so that the update is the
// same code on every backend.
#pragma once

#include <ATen/ATen.h>

#include <functional>
#include <string>
#include <vector>

namespace swarmt::train {

struct NamedParameter {
  std::string name;
  at::Tensor tensor;
};

struct AdamWOptions {
  double beta1 = 0.9;
  double beta2 = 0.95;
  double eps = 1e-8;
  double weight_decay = 0.1;
  bool decay_embeddings = false;  // embeddings are excluded from weight decay unless set
};

// True for parameters that get weight decay: matrices other than embeddings. Norm weights, biases, gate
// biases (1-D), A_log and dt_bias are excluded.
bool default_decays(const std::string& name, const at::Tensor& tensor, bool decay_embeddings);

class AdamW {
 public:
  AdamW(std::vector<NamedParameter> parameters, const AdamWOptions& options);

  // One update with learning rate `lr` from the parameters' .grad() (parameters without a gradient are
  // skipped).
  void step(double lr);
  void zero_grad();

  int64_t steps() const { return steps_; }
  const std::vector<NamedParameter>& parameters() const { return params_; }
  const std::vector<bool>& decays() const { return decays_; }

  // Checkpoint state: "exp_avg.<name>", "exp_avg_sq.<name>" and a 1-element "step" tensor.
  std::vector<std::pair<std::string, at::Tensor>> state_tensors() const;
  // Inverse of state_tensors; throws BadInput naming `source` and the tensor when missing or mis-shaped.
  void load_state_tensors(const std::function<at::Tensor(const std::string&)>& lookup, const std::string& source);

 private:
  std::vector<NamedParameter> params_;
  std::vector<bool> decays_;
  std::vector<at::Tensor> exp_avg_, exp_avg_sq_;
  AdamWOptions options_;
  int64_t steps_ = 0;
};

// Scales all gradients so that their global L2 norm is at most max_norm (if max_norm > 0). Returns the
// norm before clipping (NaN/inf if some gradient is not finite).
double clip_grad_norm(const std::vector<NamedParameter>& parameters, double max_norm);

}  // namespace swarmt::train
