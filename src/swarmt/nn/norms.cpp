#include "swarmt/nn/norms.h"

#include "swarmt/ops/rmsnorm.h"

namespace swarmt::nn {

RMSNormImpl::RMSNormImpl(int64_t dim, double eps_, bool cast_before_weight_)
    : eps(eps_), cast_before_weight(cast_before_weight_) {
  weight = register_parameter("weight", torch::ones({dim}));
}

at::Tensor RMSNormImpl::forward(const at::Tensor& x) { return ops::rms_norm(x, weight, eps, cast_before_weight); }

HeadwiseLayerNormImpl::HeadwiseLayerNormImpl(int64_t heads_, int64_t head_dim_, double eps_)
    : heads(heads_), head_dim(head_dim_), eps(eps_) {
  weight = register_parameter("weight", torch::ones({heads * head_dim}));
}

at::Tensor HeadwiseLayerNormImpl::forward(const at::Tensor& x) {
  auto xf = x.to(x.scalar_type() == at::kDouble ? at::kDouble : at::kFloat);  // reduce in fp32+
  // (x − mean) / sqrt(var + eps) per head row: ATen's fused layer norm (one pass forward and one
  // backward) without its weight, since each head has its own.
  auto normed = at::layer_norm(xf, {head_dim}, {}, {}, eps).to(x.scalar_type());
  return normed * weight.view({heads, 1, head_dim}).to(x.scalar_type());
}

}  // namespace swarmt::nn
