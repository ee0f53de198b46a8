// Rotary position embeddings (RoPE), Hugging Face "rotate_half" pairing.
//
// Dimension i is paired with i + D/2 (GPT-NeoX / HF Llama layout, not interleaved):
//   x'_i       = x_i       cos(p θ_i) - x_{i+D/2} sin(p θ_i)
//   x'_{i+D/2} = x_{i+D/2} cos(p θ_i) + x_i       sin(p θ_i),      θ_i = base^(-2i/D)
// Angles p·θ_i are computed in fp64 and only then cast: in fp32 the angle error reaches ~1e-2 rad at
// p ≈ 1.3e5 (specs/swax.md §4), which matters for 131k-token evaluation.
#pragma once

#include <ATen/ATen.h>

#include <cmath>
#include <cstdint>
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

// ---- Decode steps on raw buffers, rounded as rope_cos_sin and apply_rope round in dtype T.

// The tables of one position: c[i] = cos(p θ_i), s[i] = sin(p θ_i) for i < half, the angle in fp64, each
// value cast to T (as rope_cos_sin casts it) and held in fp32.
template <typename T>
void rope_table_row(int64_t position, const double* inv_freq, int64_t half, float* c, float* s) {
  for (int64_t i = 0; i < half; ++i) {
    const double angle = static_cast<double>(position) * inv_freq[i];
    c[i] = static_cast<float>(static_cast<T>(std::cos(angle)));
    s[i] = static_cast<float>(static_cast<T>(std::sin(angle)));
  }
}

// One row of d values: x1' = x1 c − x2 s, x2' = x2 c + x1 s, each product and sum rounded to T as the ATen
// ops round them; dimensions past 2·half pass through. out may be x.
template <typename T>
void rope_rotate_row(const T* x, int64_t d, int64_t half, const float* c, const float* s, T* out) {
  auto r = [](float v) { return static_cast<float>(static_cast<T>(v)); };
  for (int64_t i = 0; i < half; ++i) {
    const float x1 = static_cast<float>(x[i]), x2 = static_cast<float>(x[half + i]);
    out[i] = static_cast<T>(r(x1 * c[i]) - r(x2 * s[i]));
    out[half + i] = static_cast<T>(r(x2 * c[i]) + r(x1 * s[i]));
  }
  if (out != x)
    for (int64_t i = 2 * half; i < d; ++i) out[i] = x[i];
}

}  // namespace swarmt::ops
