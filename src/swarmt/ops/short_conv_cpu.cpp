#include "swarmt/ops/short_conv_cpu.h"

#include <torch/csrc/autograd/custom_function.h>

#include <vector>

#include "swarmt/core/error.h"
#include "swarmt/ops/block_gemm.h"
#include "swarmt/ops/block_loops.h"
#include "swarmt/ops/parallel.h"

namespace swarmt::ops {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// One sequence's geometry: N positions of C channels, K taps (weights transposed to (K, C)).
struct Conv {
  int64_t length, channels, taps;
  const float* wt;  // (K, C)

  // seen[t]: how many earlier inputs position t may read, t − start(t) for the latest document start at
  // or before t, or K − 1 (every tap) before the first start.
  std::vector<int64_t> visible(const bool* resets) const {
    std::vector<int64_t> seen(static_cast<size_t>(length), taps - 1);
    int64_t start = -1;
    for (int64_t t = 0; t < length; ++t) {
      if (resets != nullptr && resets[t]) start = t;
      if (start >= 0) seen[t] = std::min(taps - 1, t - start);
    }
    return seen;
  }
};

// y[t] = Σ over visible taps of w_j ⊙ x[t − lag_j]; positions before 0 are zeros.
SWARMT_VECTOR_CLONES void conv_forward(const Conv& conv, const float* x, const std::vector<int64_t>& seen, float* y) {
  const int64_t channels = conv.channels, taps = conv.taps;
  for (int64_t t = 0; t < conv.length; ++t) {
    float* yt = y + t * channels;
    std::fill(yt, yt + channels, 0.0f);
    for (int64_t lag = 0; lag <= std::min(seen[t], t); ++lag) {
      const float* w = conv.wt + (taps - 1 - lag) * channels;
      const float* xs = x + (t - lag) * channels;
      for (int64_t c = 0; c < channels; ++c) yt[c] += w[c] * xs[c];
    }
  }
}

// dx (overwritten) and dw (K, C, accumulated) from dy.
SWARMT_VECTOR_CLONES void conv_backward(const Conv& conv, const float* x, const std::vector<int64_t>& seen,
                                        const float* dy, float* dx, float* dw) {
  const int64_t channels = conv.channels, taps = conv.taps;
  std::fill(dx, dx + conv.length * channels, 0.0f);
  for (int64_t t = 0; t < conv.length; ++t) {
    const float* dyt = dy + t * channels;
    for (int64_t lag = 0; lag <= std::min(seen[t], t); ++lag) {
      const float* w = conv.wt + (taps - 1 - lag) * channels;
      float* dws = dw + (taps - 1 - lag) * channels;
      const float* xs = x + (t - lag) * channels;
      float* dxs = dx + (t - lag) * channels;
      for (int64_t c = 0; c < channels; ++c) {
        dxs[c] += w[c] * dyt[c];
        dws[c] += dyt[c] * xs[c];
      }
    }
  }
}

// dy = dz ⊙ σ(y) (1 + y (1 − σ(y))) in place of y over n values, 1 − σ(y) = e^(−y) σ(y); work holds n.
SWARMT_VECTOR_CLONES void silu_backward_row(float* y, const float* dz, int64_t n, float* work) {
  for (int64_t i = 0; i < n; ++i) work[i] = -y[i];
  block_exp(work, n);
  for (int64_t i = 0; i < n; ++i) {
    const float s = 1.0f / (1.0f + work[i]);
    y[i] = dz[i] * s * (1.0f + y[i] * work[i] * s);
  }
}

// z = silu(y) in place over n values; work holds n floats.
SWARMT_VECTOR_CLONES void silu_row(float* y, int64_t n, float* work) {
  for (int64_t i = 0; i < n; ++i) work[i] = -y[i];
  block_exp(work, n);
  for (int64_t i = 0; i < n; ++i) y[i] /= 1.0f + work[i];
}

Conv geometry(const at::Tensor& x, const at::Tensor& wt) { return {x.size(1), x.size(2), wt.size(0), wt.data_ptr<float>()}; }

class ShortConvSiluFunction : public torch::autograd::Function<ShortConvSiluFunction> {
 public:
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x_in, const at::Tensor& weight,
                            const at::Tensor& resets_in) {
    const at::Tensor x = x_in.contiguous();
    const at::Tensor wt = weight.t().contiguous();  // (K, C)
    const at::Tensor resets = resets_in.numel() > 0 ? resets_in.to(at::kBool).contiguous() : resets_in;
    const int64_t batch = x.size(0), length = x.size(1), channels = x.size(2);
    const Conv conv = geometry(x, wt);
    at::Tensor z = at::empty_like(x);
    const float* xp = x.data_ptr<float>();
    float* zp = z.data_ptr<float>();
    parallel_for(0, batch, 1, [&](int64_t begin, int64_t end) {
      std::vector<float> work(static_cast<size_t>(channels));
      for (int64_t b = begin; b < end; ++b) {
        float* zb = zp + b * length * channels;
        const auto seen = conv.visible(resets.numel() > 0 ? resets.data_ptr<bool>() + b * length : nullptr);
        conv_forward(conv, xp + b * length * channels, seen, zb);
        for (int64_t t = 0; t < length; ++t) silu_row(zb + t * channels, channels, work.data());
      }
    });
    ctx->save_for_backward({x, wt, resets});
    return z;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor &x = saved[0], &wt = saved[1], &resets = saved[2];
    const at::Tensor dz = grads[0].contiguous();
    const int64_t batch = x.size(0), length = x.size(1), channels = x.size(2), taps = wt.size(0);
    const Conv conv = geometry(x, wt);
    at::Tensor dx = at::empty_like(x);
    at::Tensor dw_parts = at::zeros({batch, taps, channels}, x.options());  // one per sequence, then summed
    const float* xp = x.data_ptr<float>();
    const float* dzp = dz.data_ptr<float>();
    float* dxp = dx.data_ptr<float>();
    float* dwp = dw_parts.data_ptr<float>();
    parallel_for(0, batch, 1, [&](int64_t begin, int64_t end) {
      std::vector<float> dy(static_cast<size_t>(length * channels)), work(static_cast<size_t>(channels));
      for (int64_t b = begin; b < end; ++b) {
        const int64_t offset = b * length * channels;
        const bool* rb = resets.numel() > 0 ? resets.data_ptr<bool>() + b * length : nullptr;
        // The convolution again (cheaper than keeping it), then dy from dz, then dx and dw.
        const auto seen = conv.visible(rb);
        conv_forward(conv, xp + offset, seen, dy.data());
        for (int64_t t = 0; t < length; ++t)
          silu_backward_row(dy.data() + t * channels, dzp + offset + t * channels, channels, work.data());
        conv_backward(conv, xp + offset, seen, dy.data(), dxp + offset, dwp + b * taps * channels);
      }
    });
    return {dx, dw_parts.sum(0).t(), at::Tensor()};
  }
};

}  // namespace

bool short_conv_silu_cpu_applies(const at::Tensor& x, const at::Tensor& weight) {
  return x.device().is_cpu() && weight.device().is_cpu() && x.scalar_type() == at::kFloat &&
         weight.scalar_type() == at::kFloat && x.dim() == 3 && weight.dim() == 2 && weight.size(0) == x.size(2) &&
         weight.size(1) >= 1;
}

at::Tensor short_conv_silu_cpu(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& resets) {
  SWARMT_CHECK(short_conv_silu_cpu_applies(x, weight), "short_conv_silu_cpu: fp32 x (B, N, C), weight (C, K)");
  // An undefined tensor cannot be an input of a custom Function (libtorch 1.13): no resets is an empty one.
  return ShortConvSiluFunction::apply(x, weight, resets.defined() ? resets : at::empty({0}, at::kBool));
}

}  // namespace swarmt::ops
