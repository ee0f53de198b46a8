#include "swarmt/ops/rmsnorm_cpu.h"

#include <torch/csrc/autograd/custom_function.h>

#include <cmath>
#include <vector>

#include "swarmt/ops/block_loops.h"
#include "swarmt/ops/parallel.h"

namespace swarmt::ops {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// Rows per task: enough work (rows × D ≥ ~32k values) that a task is worth a thread's wake-up.
int64_t row_grain(int64_t d) { return std::max<int64_t>(1, (1 << 15) / std::max<int64_t>(d, 1)); }

// One row: y = x · r · w (w may be null); returns r. Σ x² in fp64.
SWARMT_VECTOR_CLONES float forward_row(const float* x, const float* w, int64_t d, float eps, float* y) {
  const double sum = loops::squared_sum_fp64(x, d);
  const float inv = 1.0f / std::sqrt(static_cast<float>(sum / static_cast<double>(d)) + eps);
  if (w == nullptr) {
    for (int64_t i = 0; i < d; ++i) y[i] = x[i] * inv;
  } else {
    for (int64_t i = 0; i < d; ++i) y[i] = x[i] * inv * w[i];
  }
  return inv;
}

// One row's dx, and its term of dw when dw is not null; gw holds d floats.
SWARMT_VECTOR_CLONES void backward_row(const float* x, const float* g, const float* w, float inv, int64_t d, float* gw,
                                       float* dx, float* dw) {
  const float* gwr = g;  // g ⊙ w
  if (w != nullptr) {
    for (int64_t i = 0; i < d; ++i) gw[i] = g[i] * w[i];
    gwr = gw;
  }
  const float c = loops::dot(gwr, x, d) * inv * inv * inv / static_cast<float>(d);
  for (int64_t i = 0; i < d; ++i) dx[i] = gwr[i] * inv - x[i] * c;
  if (dw != nullptr)
    for (int64_t i = 0; i < d; ++i) dw[i] += g[i] * x[i] * inv;
}

// y = x · r · w for `rows` rows; r (one per row) is written for the backward.
void forward_rows(const float* x, const float* w, int64_t rows, int64_t d, double eps, float* y, float* r) {
  parallel_for(0, rows, row_grain(d), [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) r[row] = forward_row(x + row * d, w, d, static_cast<float>(eps), y + row * d);
  });
}

// dx for every row and, when dw is given, the weight's gradient summed over rows: each task sums its
// rows into its own slot of `partial` (tasks × D), then the slots are added.
void backward_rows(const float* x, const float* w, const float* r, const float* g, int64_t rows, int64_t d,
                   float* dx, float* dw) {
  const int64_t grain = row_grain(d);
  const int64_t tasks = std::max<int64_t>(1, std::min<int64_t>(at::get_num_threads(), (rows + grain - 1) / grain));
  const int64_t per_task = (rows + tasks - 1) / tasks;
  std::vector<float> partial(dw != nullptr ? static_cast<size_t>(tasks * d) : 0, 0.0f);
  parallel_for(0, tasks, 1, [&](int64_t t_begin, int64_t t_end) {
    std::vector<float> gw(static_cast<size_t>(d));
    for (int64_t t = t_begin; t < t_end; ++t) {
      float* dw_t = dw != nullptr ? partial.data() + t * d : nullptr;
      for (int64_t row = t * per_task; row < std::min(rows, (t + 1) * per_task); ++row)
        backward_row(x + row * d, g + row * d, w, r[row], d, gw.data(), dx + row * d, dw_t);
    }
  });
  if (dw == nullptr) return;
  for (int64_t i = 0; i < d; ++i) {
    float sum = 0;
    for (int64_t t = 0; t < tasks; ++t) sum += partial[t * d + i];
    dw[i] = sum;
  }
}

class RmsNormFunction : public torch::autograd::Function<RmsNormFunction> {
 public:
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x_in, const at::Tensor& weight_in, double eps) {
    const at::Tensor x = x_in.contiguous();
    const at::Tensor w = weight_in.numel() > 0 ? weight_in.contiguous() : at::Tensor();
    const int64_t d = x.size(-1), rows = x.numel() / std::max<int64_t>(d, 1);
    at::Tensor y = at::empty_like(x, at::MemoryFormat::Contiguous);
    at::Tensor r = at::empty({rows}, x.options());
    forward_rows(x.data_ptr<float>(), w.defined() ? w.data_ptr<float>() : nullptr, rows, d, eps, y.data_ptr<float>(),
                 r.data_ptr<float>());
    ctx->save_for_backward({x, w.defined() ? w : weight_in, r});
    return y;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor &x = saved[0], &r = saved[2];
    const at::Tensor w = saved[1].numel() > 0 ? saved[1] : at::Tensor();
    const at::Tensor g = grads[0].contiguous();
    const int64_t d = x.size(-1), rows = x.numel() / std::max<int64_t>(d, 1);
    at::Tensor dx = at::empty_like(x);
    at::Tensor dw = w.defined() && ctx->needs_input_grad(1) ? at::empty_like(w) : at::Tensor();
    backward_rows(x.data_ptr<float>(), w.defined() ? w.data_ptr<float>() : nullptr, r.data_ptr<float>(),
                  g.data_ptr<float>(), rows, d, dx.data_ptr<float>(), dw.defined() ? dw.data_ptr<float>() : nullptr);
    return {dx, dw, at::Tensor()};
  }
};

}  // namespace

bool rms_norm_cpu_applies(const at::Tensor& x, const at::Tensor& weight) {
  if (!x.device().is_cpu() || x.scalar_type() != at::kFloat || x.dim() < 1 || x.size(-1) == 0) return false;
  return !weight.defined() || (weight.device().is_cpu() && weight.scalar_type() == at::kFloat);
}

at::Tensor rms_norm_cpu(const at::Tensor& x, const at::Tensor& weight, double eps) {
  // An undefined tensor cannot be an input of a custom Function (libtorch 1.13): no weight is an empty one.
  return RmsNormFunction::apply(x, weight.defined() ? weight : at::empty({0}, x.options()), eps);
}

}  // namespace swarmt::ops
