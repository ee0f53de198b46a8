// RMSNorm (see rmsnorm.h). Plain ATen ops, so autograd provides the gradient.
#include "swarmt/ops/rmsnorm.h"

#include "swarmt/core/error.h"

namespace swarmt::ops {

at::Tensor rms_norm(const at::Tensor& x, const at::Tensor& weight, double eps, bool cast_before_weight) {
  SWARMT_CHECK_INPUT(x.defined() && x.dim() >= 1 && at::isFloatingType(x.scalar_type()),
                     "rms_norm: x must be a floating-point tensor of shape (..., D)");
  SWARMT_CHECK_INPUT(!weight.defined() || (weight.dim() == 1 && weight.size(0) == x.size(-1)),
                     "rms_norm: weight must have shape (", x.size(-1), "), got ", weight.sizes());
  SWARMT_CHECK_INPUT(eps >= 0.0, "rms_norm: eps must be >= 0, got ", eps);
  // fp32 at least (fp64 stays fp64 so tests can compare exactly).
  const auto compute = x.scalar_type() == at::kDouble ? at::kDouble : at::kFloat;
  auto xf = x.to(compute);
  auto normed = xf * at::rsqrt(xf.pow(2).mean(-1, /*keepdim=*/true) + eps);  // x / sqrt(mean(x²) + eps)
  if (!weight.defined()) return normed.to(x.scalar_type());
  if (cast_before_weight) return normed.to(x.scalar_type()) * weight.to(x.scalar_type());  // HF Llama
  return (normed * weight.to(compute)).to(x.scalar_type());                                // HF Gemma-3
}

}  // namespace swarmt::ops
