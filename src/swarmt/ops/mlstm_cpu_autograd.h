// Internal to ops/mlstm_chunkwise.cpp: the chunkwise mLSTM on its CPU kernels (mlstm_cpu.h) as one
// autograd Function, normaliser included.
#pragma once

#include <ATen/ATen.h>

#include <array>
#include <cstdint>

namespace swarmt::ops::detail {

// Inputs padded to whole chunks, in the compute dtype: q, k (B, H, N, Dqk); v (B, H, N, Dv); igate,
// fgate (B, H, N); the initial C0 (B, H, Dqk, Dv), n0 (B, H, Dqk), m0 (B, H); resets: no_resets() or bool
// (B, N). Returns h (B, H, N, Dv) and the final C, n and m (m without gradient). Differentiable wrt q, k,
// v, igate, fgate, C0 and n0; when no gradient is needed (grad mode off, or no input requiring one) it
// keeps two chunk boundaries instead of all of them and records nothing for a backward.
std::array<at::Tensor, 4> mlstm_chunkwise_cpu(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                              const at::Tensor& igate, const at::Tensor& fgate, const at::Tensor& C0,
                                              const at::Tensor& n0, const at::Tensor& m0, const at::Tensor& resets,
                                              int64_t chunk, double eps);

}  // namespace swarmt::ops::detail
