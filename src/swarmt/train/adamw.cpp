#include "swarmt/train/adamw.h"

#include <ATen/Parallel.h>

#include <cmath>

#include "swarmt/core/error.h"
#include "swarmt/ops/block_loops.h"

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

namespace {

bool fused_update_applies(const at::Tensor& p, const at::Tensor& g, const at::Tensor& m, const at::Tensor& v) {
  for (const auto* t : {&p, &g, &m, &v})
    if (!t->device().is_cpu() || t->scalar_type() != at::kFloat || !t->is_contiguous()) return false;
  return g.numel() == p.numel();
}

SWARMT_VECTOR_CLONES void update_range(float* p, const float* g, float* m, float* v, int64_t n, float beta1,
                                       float beta2, float decay, float step_size, float bias2, float eps) {
  for (int64_t i = 0; i < n; ++i) {
    m[i] = m[i] * beta1 + g[i] * (1.0f - beta1);
    v[i] = v[i] * beta2 + g[i] * g[i] * (1.0f - beta2);
    p[i] = p[i] * decay - step_size * m[i] / (std::sqrt(v[i] / bias2) + eps);
  }
}

// The update of one fp32 parameter in one pass over p, g, m and v (the ATen form below is eight passes
// and eight dispatches per parameter, which for a small model costs more than the arithmetic).
void fused_update(at::Tensor& p, const at::Tensor& g, at::Tensor& m, at::Tensor& v, float beta1, float beta2,
                  float decay, float step_size, float bias2, float eps) {
  float* pp = p.data_ptr<float>();
  const float* gp = g.data_ptr<float>();
  float* mp = m.data_ptr<float>();
  float* vp = v.data_ptr<float>();
  at::parallel_for(0, p.numel(), 1 << 15, [&](int64_t begin, int64_t end) {
    update_range(pp + begin, gp + begin, mp + begin, vp + begin, end - begin, beta1, beta2, decay, step_size, bias2, eps);
  });
}

}  // namespace

void AdamW::step(double lr) {
  at::NoGradGuard no_grad;
  ++steps_;
  const double bias1 = 1.0 - std::pow(options_.beta1, static_cast<double>(steps_));
  const double bias2 = 1.0 - std::pow(options_.beta2, static_cast<double>(steps_));
  for (size_t i = 0; i < params_.size(); ++i) {
    at::Tensor& p = params_[i].tensor;
    const at::Tensor& g = p.grad();
    if (!g.defined()) continue;
    const bool decay = decays_[i] && options_.weight_decay > 0;
    if (fused_update_applies(p, g, exp_avg_[i], exp_avg_sq_[i])) {
      fused_update(p, g, exp_avg_[i], exp_avg_sq_[i], static_cast<float>(options_.beta1),
                   static_cast<float>(options_.beta2), decay ? static_cast<float>(1.0 - lr * options_.weight_decay) : 1.0f,
                   static_cast<float>(lr / bias1), static_cast<float>(bias2), static_cast<float>(options_.eps));
      continue;
    }
    exp_avg_[i].mul_(options_.beta1).add_(g, 1.0 - options_.beta1);
    exp_avg_sq_[i].mul_(options_.beta2).addcmul_(g, g, 1.0 - options_.beta2);
    if (decay) p.mul_(1.0 - lr * options_.weight_decay);
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

namespace {

// Σ g² in fp64: one pass for a contiguous fp32 CPU gradient (ATen: a cast, a
// square and a sum, each a pass and an allocation), else the ATen ops.
at::Tensor squared_sum(const at::Tensor& g) {
  if (!g.device().is_cpu() || g.scalar_type() != at::kFloat || !g.is_contiguous())
    return g.to(at::kDouble).pow(2).sum();
  return at::scalar_tensor(ops::loops::squared_sum_fp64(g.data_ptr<float>(), g.numel()),
                           at::TensorOptions().dtype(at::kDouble));
}

}  // namespace

double clip_grad_norm(const std::vector<NamedParameter>& parameters, double max_norm) {
  at::NoGradGuard no_grad;
  at::Tensor total;
  for (const auto& p : parameters) {
    const at::Tensor& g = p.tensor.grad();
    if (!g.defined()) continue;
    at::Tensor sq = squared_sum(g);
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
