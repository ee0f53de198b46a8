#include "swarmt/train/adamw.h"

#include <cmath>

#include "swarmt/core/error.h"

namespace swarmt::train {

bool default_decays(const std::string& name, const at::Tensor& tensor, bool decay_embeddings) {
  if (tensor.dim() < 2) return false;  // norms, biases, gate biases, A_log, dt_bias
  if (name.find("embed_tokens") != std::string::npos || name.find("memory_tokens") != std::string::npos)
    return decay_embeddings;
  return true;
}

AdamW::AdamW(std::vector<NamedParameter> parameters, const AdamWOptions& options)
    : params_(std::move(parameters)), options_(options) {
  for (const auto& p : params_) {
    decays_.push_back(default_decays(p.name, p.tensor, options_.decay_embeddings));
    exp_avg_.push_back(at::zeros_like(p.tensor, at::MemoryFormat::Contiguous));
    exp_avg_sq_.push_back(at::zeros_like(p.tensor, at::MemoryFormat::Contiguous));
  }
}

void AdamW::step(double lr) {
  at::NoGradGuard no_grad;
  ++steps_;
  const double bias1 = 1.0 - std::pow(options_.beta1, static_cast<double>(steps_));
  const double bias2 = 1.0 - std::pow(options_.beta2, static_cast<double>(steps_));
  for (size_t i = 0; i < params_.size(); ++i) {
    at::Tensor& p = params_[i].tensor;
    const at::Tensor& g = p.grad();
    if (!g.defined()) continue;
    exp_avg_[i].mul_(options_.beta1).add_(g, 1.0 - options_.beta1);
    exp_avg_sq_[i].mul_(options_.beta2).addcmul_(g, g, 1.0 - options_.beta2);
    if (decays_[i] && options_.weight_decay > 0) p.mul_(1.0 - lr * options_.weight_decay);
    auto denom = (exp_avg_sq_[i] / bias2).sqrt_().add_(options_.eps);
    p.addcdiv_(exp_avg_[i], denom, -lr / bias1);
  }
}

void AdamW::zero_grad() {
  for (auto& p : params_) {
    if (p.tensor.grad().defined()) {
      p.tensor.mutable_grad().detach_();
      p.tensor.mutable_grad().zero_();
    }
  }
}

std::vector<std::pair<std::string, at::Tensor>> AdamW::state_tensors() const {
  std::vector<std::pair<std::string, at::Tensor>> out;
  for (size_t i = 0; i < params_.size(); ++i) {
    out.emplace_back("exp_avg." + params_[i].name, exp_avg_[i]);
    out.emplace_back("exp_avg_sq." + params_[i].name, exp_avg_sq_[i]);
  }
  out.emplace_back("step", at::full({1}, steps_, at::TensorOptions().dtype(at::kLong)));
  return out;
}

void AdamW::load_state_tensors(const std::function<at::Tensor(const std::string&)>& lookup, const std::string& source) {
  at::NoGradGuard no_grad;
  auto load_into = [&](const std::string& name, at::Tensor& target) {
    at::Tensor stored = lookup(name);
    SWARMT_CHECK_INPUT(stored.defined(), source, ": optimizer tensor '", name, "' is missing");
    SWARMT_CHECK_INPUT(stored.sizes() == target.sizes(), source, ": optimizer tensor '", name, "' has shape ",
                       stored.sizes(), ", expected ", target.sizes());
    target.copy_(stored);
  };
  for (size_t i = 0; i < params_.size(); ++i) {
    load_into("exp_avg." + params_[i].name, exp_avg_[i]);
    load_into("exp_avg_sq." + params_[i].name, exp_avg_sq_[i]);
  }
  at::Tensor step = lookup("step");
  SWARMT_CHECK_INPUT(step.defined() && step.numel() == 1, source, ": optimizer tensor 'step' is missing");
  steps_ = step.to(at::kLong).item<int64_t>();
}

double clip_grad_norm(const std::vector<NamedParameter>& parameters, double max_norm) {
  at::NoGradGuard no_grad;
  at::Tensor total;
  for (const auto& p : parameters) {
    const at::Tensor& g = p.tensor.grad();
    if (!g.defined()) continue;
    auto sq = g.to(at::kDouble).pow(2).sum();
    total = total.defined() ? total + sq : sq;
  }
  if (!total.defined()) return 0.0;
  double norm = std::sqrt(total.item<double>());
  if (max_norm > 0 && std::isfinite(norm) && norm > max_norm) {
    double scale = max_norm / (norm + 1e-6);
    for (const auto& p : parameters)
      if (p.tensor.grad().defined()) p.tensor.mutable_grad().mul_(scale);
  }
  return norm;
}

}  // namespace swarmt::train
