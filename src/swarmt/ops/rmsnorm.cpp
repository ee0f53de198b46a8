// RMSNorm (see rmsnorm.h). Plain ATen ops, so autograd provides the gradient; a few rows without
// autograd (a decode step) take one loop instead of eight ATen ops, and fp32 training on the CPU the
// fused forward and backward of rmsnorm_cpu.h.
#include "swarmt/ops/rmsnorm.h"

#include "swarmt/core/error.h"
#include "swarmt/ops/rmsnorm_cpu.h"

namespace swarmt::ops {
namespace {

// Rows of at most this many elements in all go through the loop.
constexpr int64_t kNormLoopMaxElements = 1 << 14;

bool norm_loop_applies(const at::Tensor& x, const at::Tensor& weight) {
  const auto dtype = x.scalar_type();
  if (!x.device().is_cpu() || (dtype != at::kFloat && dtype != at::kBFloat16) || !x.is_contiguous()) return false;
  if (x.numel() > kNormLoopMaxElements || x.numel() == 0) return false;
  if (weight.defined() && (!weight.device().is_cpu() || !weight.is_contiguous() ||
                           (weight.scalar_type() != at::kFloat && weight.scalar_type() != at::kBFloat16)))
    return false;
  return !at::GradMode::is_enabled() || (!x.requires_grad() && !(weight.defined() && weight.requires_grad()));
}

// The same rounding as the ATen ops below (rms_norm_row), row by row.
template <typename T, typename W>
at::Tensor rms_norm_loop(const at::Tensor& x, const at::Tensor& weight, double eps, bool cast_before_weight) {
  const int64_t d = x.size(-1), rows = x.numel() / d;
  at::Tensor y = at::empty_like(x);
  const T* xp = x.data_ptr<T>();
  const W* wp = weight.defined() ? weight.data_ptr<W>() : nullptr;
  T* yp = y.data_ptr<T>();
  for (int64_t r = 0; r < rows; ++r) rms_norm_row(xp + r * d, d, wp, eps, cast_before_weight, yp + r * d);
  return y;
}

template <typename T>
at::Tensor rms_norm_loop(const at::Tensor& x, const at::Tensor& weight, double eps, bool cast_before_weight) {
  if (weight.defined() && weight.scalar_type() == at::kBFloat16)
    return rms_norm_loop<T, at::BFloat16>(x, weight, eps, cast_before_weight);
  return rms_norm_loop<T, float>(x, weight, eps, cast_before_weight);
}

}  // namespace

at::Tensor rms_norm(const at::Tensor& x, const at::Tensor& weight, double eps, bool cast_before_weight) {
  SWARMT_CHECK_INPUT(x.defined() && x.dim() >= 1 && at::isFloatingType(x.scalar_type()),
                     "rms_norm: x must be a floating-point tensor of shape (..., D)");
  SWARMT_CHECK_INPUT(!weight.defined() || (weight.dim() == 1 && weight.size(0) == x.size(-1)),
                     "rms_norm: weight must have shape (", x.size(-1), "), got ", weight.sizes());
  SWARMT_CHECK_INPUT(eps >= 0.0, "rms_norm: eps must be >= 0, got ", eps);
  if (norm_loop_applies(x, weight))
    return x.scalar_type() == at::kFloat ? rms_norm_loop<float>(x, weight, eps, cast_before_weight)
                                         : rms_norm_loop<at::BFloat16>(x, weight, eps, cast_before_weight);
  // Training in fp32 on the CPU: one fused pass forward and one backward.
  if (at::GradMode::is_enabled() && (x.requires_grad() || (weight.defined() && weight.requires_grad())) &&
      rms_norm_cpu_applies(x, weight))
    return rms_norm_cpu(x, weight, eps);
  // fp32 at least (fp64 stays fp64 so tests can compare exactly).
  const auto compute = x.scalar_type() == at::kDouble ? at::kDouble : at::kFloat;
  auto xf = x.to(compute);
  auto normed = xf * at::rsqrt(xf.pow(2).mean(-1, /*keepdim=*/true) + eps);  // x / sqrt(mean(x²) + eps)
  if (!weight.defined()) return normed.to(x.scalar_type());
  if (cast_before_weight) return normed.to(x.scalar_type()) * weight.to(x.scalar_type());  // HF Llama
  return (normed * weight.to(compute)).to(x.scalar_type());                                // HF Gemma-3
}

}  // namespace swarmt::ops
