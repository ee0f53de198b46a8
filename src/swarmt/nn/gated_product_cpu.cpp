#include "swarmt/nn/gated_product_cpu.h"

#include <torch/csrc/autograd/custom_function.h>

#include <cmath>
#include <vector>

#include "swarmt/ops/block_gemm.h"
#include "swarmt/ops/block_loops.h"
#include "swarmt/ops/parallel.h"

namespace swarmt::nn {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

constexpr float kGeluScale = 0.7978845608028654f;  // √(2/π)
constexpr float kGeluCubic = 0.044715f;

// For one row of g: a = act(g) and, when da is given, act'(g). `work` holds I floats.
SWARMT_VECTOR_CLONES void activate_row(const float* g, int64_t n, Activation act, float* work, float* a, float* da) {
  if (act == Activation::SiLU) {
    for (int64_t i = 0; i < n; ++i) work[i] = -g[i];
    ops::block_exp(work, n);  // e^(−g)
    for (int64_t i = 0; i < n; ++i) {
      const float s = 1.0f / (1.0f + work[i]);  // σ(g); 1 − σ(g) = e^(−g) σ(g), without cancellation
      a[i] = g[i] * s;
      if (da != nullptr) da[i] = s * (1.0f + g[i] * work[i] * s);
    }
    return;
  }
  for (int64_t i = 0; i < n; ++i) work[i] = 2.0f * kGeluScale * (g[i] + kGeluCubic * g[i] * g[i] * g[i]);
  ops::block_exp(work, n);  // e = e^(2z), t = tanh z: ½ (1 + t) = e / (e + 1), ¼ (1 − t²) = e / (e + 1)²
  for (int64_t i = 0; i < n; ++i) {
    const float r = 1.0f / (work[i] + 1.0f);
    const float half_one_plus_t = std::isinf(work[i]) ? 1.0f : work[i] * r;
    a[i] = g[i] * half_one_plus_t;
    if (da != nullptr)
      da[i] = half_one_plus_t +
              2.0f * g[i] * half_one_plus_t * r * kGeluScale * (1.0f + 3.0f * kGeluCubic * g[i] * g[i]);
  }
}

// h = act(g) ⊙ u for one row; work holds 2n floats.
SWARMT_VECTOR_CLONES void forward_row(const float* g, int64_t n, Activation act, float* work, float* h) {
  activate_row(g, n, act, work, work + n, nullptr);
  const float* a = work + n;
  const float* u = g + n;
  for (int64_t i = 0; i < n; ++i) h[i] = a[i] * u[i];
}

// [dg | du] for one row of gu and dh; work holds 3n floats.
SWARMT_VECTOR_CLONES void backward_row(const float* g, const float* d, int64_t n, Activation act, float* work,
                                       float* dg) {
  float *a = work + n, *da = work + 2 * n;
  activate_row(g, n, act, work, a, da);
  const float* u = g + n;
  float* du = dg + n;
  for (int64_t i = 0; i < n; ++i) {
    dg[i] = d[i] * u[i] * da[i];
    du[i] = d[i] * a[i];
  }
}

int64_t row_grain(int64_t n) { return std::max<int64_t>(1, (1 << 14) / std::max<int64_t>(n, 1)); }

class GatedProductFunction : public torch::autograd::Function<GatedProductFunction> {
 public:
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& gu_in, int64_t act_code) {
    const at::Tensor gu = gu_in.contiguous();
    const auto act = static_cast<Activation>(act_code);
    const int64_t n = gu.size(-1) / 2, rows = gu.numel() / std::max<int64_t>(2 * n, 1);
    std::vector<int64_t> shape(gu.sizes().begin(), gu.sizes().end());
    shape.back() = n;
    at::Tensor h = at::empty(shape, gu.options());
    const float* gp = gu.data_ptr<float>();
    float* hp = h.data_ptr<float>();
    ops::parallel_for(0, rows, row_grain(n), [&](int64_t begin, int64_t end) {
      std::vector<float> work(static_cast<size_t>(2 * n));
      for (int64_t r = begin; r < end; ++r) forward_row(gp + r * 2 * n, n, act, work.data(), hp + r * n);
    });
    ctx->save_for_backward({gu});
    ctx->saved_data["act"] = act_code;
    return h;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const at::Tensor gu = ctx->get_saved_variables()[0];
    const auto act = static_cast<Activation>(ctx->saved_data["act"].toInt());
    const at::Tensor dh = grads[0].contiguous();
    const int64_t n = gu.size(-1) / 2, rows = gu.numel() / std::max<int64_t>(2 * n, 1);
    at::Tensor dgu = at::empty_like(gu);
    const float* gp = gu.data_ptr<float>();
    const float* dhp = dh.data_ptr<float>();
    float* dp = dgu.data_ptr<float>();
    ops::parallel_for(0, rows, row_grain(n), [&](int64_t begin, int64_t end) {
      std::vector<float> work(static_cast<size_t>(3 * n));
      for (int64_t r = begin; r < end; ++r) backward_row(gp + r * 2 * n, dhp + r * n, n, act, work.data(), dp + r * 2 * n);
    });
    return {dgu, at::Tensor()};
  }
};

}  // namespace

bool gated_product_cpu_applies(const at::Tensor& gu) {
  return gu.device().is_cpu() && gu.scalar_type() == at::kFloat && gu.dim() >= 1;
}

at::Tensor gated_product_cpu(const at::Tensor& gu, Activation act) {
  return GatedProductFunction::apply(gu, static_cast<int64_t>(act));
}

}  // namespace swarmt::nn
