// Shared plumbing of the chunkwise recurrent kernels (mLSTM, Gated DeltaNet): input checks, padding the
// sequence to whole chunks, the (B, H, NC, L, ·) chunk view, and the document-reset masks.
//
// Document resets without -inf arithmetic (both kernels): the log gate of a reset position is set to 0
// inside the within-chunk cumsum, and a per-chunk segment index
//   seg_r = number of resets at positions <= r inside the chunk
// decides which paths exist: intra pair (r, s) iff seg_r == seg_s; the state carried into the chunk
// reaches row r iff seg_r == 0; token r reaches the chunk-end state iff seg_r == seg_last; the carried
// state survives the chunk iff the chunk has no reset. Masked log-weights are kMaskedLogWeight, a large
// negative finite number, so max() and exp() never meet inf - inf.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <initializer_list>
#include <string>

namespace swarmt::ops::detail {

// "No path": exp() of it (minus any realistic stabiliser) is exactly 0.
constexpr double kMaskedLogWeight = -1e30;

// fp64 inputs compute in fp64 (tests), everything else in fp32: states, gate cumsums and matmuls.
at::ScalarType recurrent_compute_dtype(const at::Tensor& x);

// Number of chunks of length `chunk` that cover `length` positions (the last one may be padded).
int64_t num_chunks(int64_t length, int64_t chunk);

// Pads the time dimension `dim` of x at its end to `length` entries with `value` (no copy if x is long
// enough already).
at::Tensor pad_time(const at::Tensor& x, int64_t dim, int64_t length, double value);

// (B, H, NC·L, ...) -> (B, H, NC, L, ...), a view.
at::Tensor split_chunks(const at::Tensor& x, int64_t chunk);

// Document-reset masks of a padded sequence, broadcastable against (B, H, NC, L[, L]). All undefined
// when there are no resets (every path exists).
struct ResetMasks {
  at::Tensor same_segment;   // bool (B, 1, NC, L, L): seg_r == seg_s
  at::Tensor from_start;     // bool (B, 1, NC, L): seg_r == 0 (the carried state reaches r)
  at::Tensor to_end;         // bool (B, 1, NC, L): seg_r == seg_last (r reaches the chunk-end state)
  at::Tensor carried;        // bool (B, 1, NC): the chunk has no reset (the carried state survives it)
  at::Tensor reset;          // bool (B, 1, NC, L): the reset positions themselves
  at::Tensor chunk_segment;  // int64 (B, 1, NC): number of chunks <= this one that contain a reset
  bool defined() const { return reset.defined(); }
};

// Custom autograd Functions (libtorch 1.13) reject undefined tensor inputs, so "no resets" travels into
// them as an empty bool tensor: no_resets() makes it, resets_or_none() turns it back into undefined.
at::Tensor no_resets(at::Device device);
at::Tensor resets_or_none(const at::Tensor& resets);

// resets: undefined or bool (B, NC·L). Returns the masks above (undefined if resets is undefined).
ResetMasks make_reset_masks(const at::Tensor& resets, int64_t chunk);

// Lower-triangular causal mask (L, L): inclusive (s <= r) or strict (s < r), as bool on `device`.
at::Tensor causal_mask(int64_t chunk, bool inclusive, at::Device device);

// Combines a causal mask with an optional same-segment mask.
at::Tensor intra_chunk_mask(int64_t chunk, bool inclusive, const ResetMasks& masks, at::Device device);

// Whether autograd records through an op on these inputs (grad mode on and one of them requires grad):
// when not, the CPU kernels skip what only a backward would read.
bool needs_grad(std::initializer_list<at::Tensor> inputs);

// Reverse cumulative sum along `dim`: out_t = Σ_{u >= t} x_u.
at::Tensor reverse_cumsum(const at::Tensor& x, int64_t dim);

// Shape checks shared by the kernels; throw BadInput naming `what` and the offending tensor.
void check_rank(const at::Tensor& x, int64_t rank, const std::string& what, const std::string& name);
void check_same_size(const at::Tensor& x, at::IntArrayRef expected, const std::string& what,
                     const std::string& name);
void check_resets(const at::Tensor& resets, int64_t batch, int64_t length, const std::string& what);

}  // namespace swarmt::ops::detail
