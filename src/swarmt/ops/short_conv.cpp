// Causal depthwise short convolution (fla ShortConvolution, before the SiLU), with a decode cache and
// document resets. K shifted multiply-adds over (B, N, C); differentiable by autograd.
#include "swarmt/core/error.h"
#include "swarmt/ops/gated_delta.h"
#include "swarmt/ops/recurrent_chunking.h"

namespace swarmt::ops {

std::pair<at::Tensor, at::Tensor> short_conv(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& cache,
                                             const at::Tensor& resets) {
  const std::string what = "short_conv";
  detail::check_rank(x, 3, what, "x");
  detail::check_rank(weight, 2, what, "weight");
  const int64_t batch = x.size(0), length = x.size(1), channels = x.size(2), taps = weight.size(1);
  SWARMT_CHECK_INPUT(weight.size(0) == channels && taps >= 1, what, ": weight has shape ", weight.sizes(),
                     ", expected (", channels, ", K >= 1)");
  const int64_t history = taps - 1;
  if (cache.defined()) detail::check_same_size(cache, {batch, history, channels}, what, "cache");
  detail::check_resets(resets, batch, length, what);

  // x_ext = [previous K-1 inputs ; x]: (B, K-1+N, C); output t reads x_ext[t .. t+K-1].
  at::Tensor before = cache.defined() ? cache.to(x.scalar_type()) : at::zeros({batch, history, channels}, x.options());
  at::Tensor extended = at::cat({before, x}, 1);

  // With resets, tap j of output t reads position p = t - (K-1-j), and it is dropped when a document
  // starts after p (p < start(t), start(t) = last reset <= t; the cache counts as before position 0).
  at::Tensor distance_to_start;  // (B, N, 1): t - start(t), or K (all taps visible) without a reset so far
  at::Tensor last_start;         // (B): start of the document that the new cache continues, -1 if none
  if (resets.defined()) {
    at::Tensor position = at::arange(length, x.options().dtype(at::kLong)).unsqueeze(0).expand({batch, length});
    at::Tensor start = std::get<0>(at::cummax(at::where(resets, position, at::full({}, -1, position.options())), 1));
    distance_to_start = at::where(start >= 0, position - start, at::full({}, taps, position.options())).unsqueeze(-1);
    last_start = start.select(1, length - 1);
  }
  at::Tensor y = at::zeros_like(x);
  for (int64_t j = 0; j < taps; ++j) {
    at::Tensor term = extended.narrow(1, j, length) * weight.select(1, j).to(x.scalar_type());  // (B, N, C)
    const int64_t lag = history - j;
    if (resets.defined() && lag > 0) term = term * (distance_to_start >= lag).to(x.scalar_type());
    y = y + term;
  }

  // New cache: the last K-1 inputs; entries before the latest document start are zeroed (a zero input is
  // exactly "not seen" for a bias-free convolution), so the next call continues the document correctly.
  at::Tensor new_cache = extended.narrow(1, length, history);
  if (resets.defined() && history > 0) {
    at::Tensor cache_position = at::arange(length - history, length, x.options().dtype(at::kLong)).unsqueeze(0);
    at::Tensor visible = cache_position >= last_start.unsqueeze(1);  // (B, K-1); last_start -1: all visible
    new_cache = new_cache * visible.unsqueeze(-1).to(x.scalar_type());
  }
  return {y, new_cache};
}

}  // namespace swarmt::ops
