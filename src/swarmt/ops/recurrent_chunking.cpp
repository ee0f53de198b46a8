#include "swarmt/ops/recurrent_chunking.h"

#include "swarmt/core/error.h"

namespace swarmt::ops::detail {

at::ScalarType recurrent_compute_dtype(const at::Tensor& x) {
  return x.scalar_type() == at::kDouble ? at::kDouble : at::kFloat;
}

int64_t num_chunks(int64_t length, int64_t chunk) { return (length + chunk - 1) / chunk; }

at::Tensor pad_time(const at::Tensor& x, int64_t dim, int64_t length, double value) {
  if (dim < 0) dim += x.dim();
  int64_t missing = length - x.size(dim);
  if (missing <= 0) return x;
  // constant_pad_nd takes (left, right) pairs starting from the last dimension.
  std::vector<int64_t> pad(2 * (x.dim() - dim), 0);
  pad[pad.size() - 1] = missing;
  return at::constant_pad_nd(x, pad, value);
}

at::Tensor split_chunks(const at::Tensor& x, int64_t chunk) {
  std::vector<int64_t> shape = x.sizes().vec();
  int64_t length = shape[2];
  shape[2] = chunk;
  shape.insert(shape.begin() + 2, length / chunk);
  return x.view(shape);
}

at::Tensor no_resets(at::Device device) { return at::empty({0}, at::TensorOptions().dtype(at::kBool).device(device)); }

at::Tensor resets_or_none(const at::Tensor& resets) {
  return resets.defined() && resets.numel() > 0 ? resets : at::Tensor();
}

ResetMasks make_reset_masks(const at::Tensor& resets, int64_t chunk) {
  ResetMasks masks;
  if (!resets.defined()) return masks;
  int64_t batch = resets.size(0);
  int64_t chunks = resets.size(1) / chunk;
  masks.reset = resets.to(at::kBool).view({batch, 1, chunks, chunk});
  at::Tensor segment = at::cumsum(masks.reset.to(at::kLong), -1);  // (B, 1, NC, L)
  at::Tensor last = segment.narrow(-1, chunk - 1, 1);              // (B, 1, NC, 1)
  masks.same_segment = segment.unsqueeze(-1) == segment.unsqueeze(-2);
  masks.from_start = segment == 0;
  masks.to_end = segment == last;
  masks.carried = last.squeeze(-1) == 0;
  masks.chunk_segment = at::cumsum(masks.carried.logical_not().to(at::kLong), -1);
  return masks;
}

at::Tensor causal_mask(int64_t chunk, bool inclusive, at::Device device) {
  auto ones = at::ones({chunk, chunk}, at::TensorOptions().dtype(at::kBool).device(device));
  return at::tril(ones, inclusive ? 0 : -1);
}

at::Tensor intra_chunk_mask(int64_t chunk, bool inclusive, const ResetMasks& masks, at::Device device) {
  at::Tensor causal = causal_mask(chunk, inclusive, device);
  return masks.defined() ? at::logical_and(masks.same_segment, causal) : causal;
}

bool needs_grad(std::initializer_list<at::Tensor> inputs) {
  if (!at::GradMode::is_enabled()) return false;
  for (const at::Tensor& x : inputs)
    if (x.requires_grad()) return true;
  return false;
}

at::Tensor reverse_cumsum(const at::Tensor& x, int64_t dim) {
  return at::flip(at::cumsum(at::flip(x, {dim}), dim), {dim});
}

void check_rank(const at::Tensor& x, int64_t rank, const std::string& what, const std::string& name) {
  SWARMT_CHECK_INPUT(x.defined(), what, ": ", name, " is undefined");
  SWARMT_CHECK_INPUT(x.dim() == rank, what, ": ", name, " must have ", rank, " dimensions, got shape ",
                     x.sizes());
}

void check_same_size(const at::Tensor& x, at::IntArrayRef expected, const std::string& what,
                     const std::string& name) {
  SWARMT_CHECK_INPUT(x.defined(), what, ": ", name, " is undefined");
  SWARMT_CHECK_INPUT(x.sizes() == expected, what, ": ", name, " has shape ", x.sizes(), ", expected ",
                     expected);
}

void check_resets(const at::Tensor& resets, int64_t batch, int64_t length, const std::string& what) {
  if (!resets.defined()) return;
  SWARMT_CHECK_INPUT(resets.scalar_type() == at::kBool, what, ": resets must be bool, got ",
                     resets.scalar_type());
  check_same_size(resets, {batch, length}, what, "resets");
}

}  // namespace swarmt::ops::detail
