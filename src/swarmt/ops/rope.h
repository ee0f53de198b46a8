// Rotary position embeddings (RoPE), Hugging Face "rotate_half" pairing.
//
// Dimension i is paired with i + D/2 (GPT-NeoX / HF Llama layout, not interleaved):
//   x'_i       = x_i       cos(p θ_i) - x_{i+D/2} sin(p θ_i)
//   x'_{i+D/2} = x_{i+D/2} cos(p θ_i) + x_i       sin(p θ_i),      θ_i = base^(-2i/D)
// Angles p·θ_i are computed in fp64 and only then cast: in fp32 the angle error reaches ~1e-2 rad at
// p ≈ 1.3e5 (specs/swax.md §4), which matters for 131k-token evaluation.
#pragma once

#include <ATen/ATen.h>

#include <string>
#include <utility>

namespace swarmt::ops {

// rope_scaling of HF config.json. type "none" (default), "linear" (positions divided by factor) or
// "llama3" (frequency-dependent scaling of the inverse frequencies, HF `_compute_llama3_parameters`).
struct RopeScaling {
  std::string type = "none";
  double factor = 1.0;
  double low_freq_factor = 1.0;                    // llama3
  double high_freq_factor = 4.0;                   // llama3
  int64_t original_max_position_embeddings = 8192; // llama3
};

// Inverse frequencies θ_i for i in [0, rotary_dim/2), fp64, with the scaling applied. Shape (rotary_dim/2).
at::Tensor rope_inv_freq(int64_t rotary_dim, double base, const RopeScaling& scaling = {});

// cos and sin tables for absolute positions (int64, shape (N) or (B, N)), each of shape (N, D/2) or
// (B, N, D/2), computed in fp64 and cast to `dtype`.
std::pair<at::Tensor, at::Tensor> rope_cos_sin(const at::Tensor& positions, const at::Tensor& inv_freq,
                                               at::ScalarType dtype);

// Applies the rotation to x: (B, H, N, D) with tables (N, D/2) or (B, N, D/2). Differentiable.
at::Tensor apply_rope(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin);

}  // namespace swarmt::ops
