#include "swarmt/ops/rope_cpu.h"

#include <torch/csrc/autograd/custom_function.h>

#include <cstring>

#include "swarmt/core/error.h"
#include "swarmt/ops/block_loops.h"
#include "swarmt/ops/parallel.h"

namespace swarmt::ops {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// One row: x1' = x1 c − x2 (sign · s), x2' = x2 c + x1 (sign · s); dimensions past 2·half copied.
SWARMT_VECTOR_CLONES void rotate_row(const float* x, const float* c, const float* s, float sign, int64_t half,
                                     int64_t d, float* out) {
  for (int64_t i = 0; i < half; ++i) {
    const float x1 = x[i], x2 = x[half + i], si = sign * s[i];
    out[i] = x1 * c[i] - x2 * si;
    out[half + i] = x2 * c[i] + x1 * si;
  }
  if (2 * half < d) std::memcpy(out + 2 * half, x + 2 * half, sizeof(float) * static_cast<size_t>(d - 2 * half));
}

// Rotates every row of src (any strides with unit stride in D) into the contiguous dst; `sign` +1 is the
// rotation, −1 its inverse (the gradient).
void rotate(const at::Tensor& src, const at::Tensor& cos, const at::Tensor& sin, float sign, at::Tensor& dst) {
  const int64_t batch = src.size(0), heads = src.size(1), length = src.size(2), d = src.size(3);
  const int64_t half = cos.size(-1);
  const at::Tensor c = cos.contiguous(), s = sin.contiguous();
  const float* cp = c.data_ptr<float>();
  const float* sp = s.data_ptr<float>();
  const float* xp = src.data_ptr<float>();
  float* op = dst.data_ptr<float>();
  const int64_t s0 = src.stride(0), s1 = src.stride(1), s2 = src.stride(2);
  const int64_t table_batch = c.dim() == 3 ? length * half : 0;
  parallel_for(0, batch * heads, 1, [&](int64_t begin, int64_t end) {
    for (int64_t bh = begin; bh < end; ++bh) {
      const int64_t b = bh / heads, h = bh % heads;
      for (int64_t j = 0; j < length; ++j) {
        const float* x = xp + b * s0 + h * s1 + j * s2;
        float* out = op + (bh * length + j) * d;
        rotate_row(x, cp + b * table_batch + j * half, sp + b * table_batch + j * half, sign, half, d, out);
      }
    }
  });
}

class RopeFunction : public torch::autograd::Function<RopeFunction> {
 public:
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin) {
    at::Tensor out = at::empty(x.sizes(), x.options());
    rotate(x, cos, sin, 1.0f, out);
    ctx->save_for_backward({cos, sin});
    return out;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor g = grads[0].stride(-1) == 1 ? grads[0] : grads[0].contiguous();
    at::Tensor dx = at::empty(g.sizes(), g.options());
    rotate(g, saved[0], saved[1], -1.0f, dx);
    return {dx, at::Tensor(), at::Tensor()};
  }
};

}  // namespace

bool apply_rope_cpu_applies(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin) {
  if (!x.device().is_cpu() || x.scalar_type() != at::kFloat || x.dim() != 4 || x.stride(3) != 1) return false;
  for (const auto* t : {&cos, &sin})
    if (!t->device().is_cpu() || t->scalar_type() != at::kFloat || t->requires_grad()) return false;
  return true;
}

at::Tensor apply_rope_cpu(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin) {
  SWARMT_CHECK(apply_rope_cpu_applies(x, cos, sin), "apply_rope_cpu: fp32 x (B, H, N, D) and tables");
  return RopeFunction::apply(x, cos, sin);
}

}  // namespace swarmt::ops
