// The linear layers of CPU training in fp32, y = x Wᵀ + b and its gradients, on gemm_small.
//
// Why not at::linear: at the shapes of small models' training (rows = batch · length in the thousands,
// weights of 128 × 384) OpenBLAS packs both operands and first zeroes C in a separate pass; in a training
// step of the demo config its packing and zeroing were 15 of its 53 % of the samples. gemm_small packs
// nothing:
//   forward   Y = X Wᵀ      strips of X's rows against Wᵀ (W transposed once per call, L2-resident)
//   backward  dX = dY W     the same, with W as it is stored
//             dW = dYᵀ X    each thread sums its share of the rows into its own dW, in blocks of 64 rows
//                           that every 8-row strip of dW reads from L1
//             db = Σ_rows dY
// Only where that is the faster path: weights up to 1 MiB (larger ones are re-read from L3 or memory for
// every strip), both dimensions at least 16 (narrower products run mostly masked lanes), at least 64
// rows, an autograd graph to record, no autocast (which would run the product in bf16), gemm_small's
// vector kernel (AVX2 or AVX-512). Results equal at::linear's to fp32 rounding (another order of the sums).
#pragma once

#include <ATen/ATen.h>

#include <vector>

namespace swarmt::ops {

// True when dense_linear computes at::linear(x, weight, bias) for training (see above).
bool dense_linear_applies(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias = {});

// y = x Wᵀ + b, x (..., in), weight (out, in), bias (out) or undefined; differentiable in all three.
// Requires dense_linear_applies.
at::Tensor dense_linear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias = {});

// The same product for weights stacked along out (weight = [W_0; W_1; ...], bias likewise or undefined),
// returned as the pieces x W_jᵀ + b_j of widths `sizes` (views of one output, as split_with_sizes).
// The backward reads the pieces' gradients in place, whatever their strides, instead of concatenating
// them. Requires dense_linear_applies(x, weight, bias); sizes sum to weight.size(0).
std::vector<at::Tensor> dense_linear_group(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias,
                                           const std::vector<int64_t>& sizes);

// Turns the path off (at::linear instead) or on, for comparisons; on by default.
void set_dense_linear_kernels(bool on);
bool dense_linear_kernels();

}  // namespace swarmt::ops
