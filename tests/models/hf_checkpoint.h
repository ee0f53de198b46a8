// Shared by the Llama and Gemma-3 model tests: tiny random checkpoints written in Hugging Face layout,
// and the plain fp64 building blocks of the reference forward passes (specs/hf-formats.md §2.2, §2.4).
//
// The reference is deliberately written differently from the library: loops over heads and positions,
// explicit masks, formulas spelled out (no ops::, no nn::), so that a shared mistake is unlikely.
#pragma once

#include <ATen/ATen.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "swarmt/core/error.h"
#include "swarmt/core/json.h"
#include "swarmt/core/safetensors_torch.h"
#include "swarmt/models/model_io.h"
#include "test_util.h"

namespace swarmt::testing::hf {

using Weights = std::map<std::string, at::Tensor>;

// The message of the swarmt::Error `f` throws, or "(no error)".
inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

// Token ids (batch, n) drawn uniformly from the vocabulary.
inline at::Tensor random_tokens(int64_t batch, int64_t n, int64_t vocab) {
  return at::randint(0, vocab, {batch, n}, at::TensorOptions().dtype(at::kLong));
}

// Loading in fp64, for comparisons with the fp64 reference at tight tolerances.
inline models::LoadOptions in_float64() {
  models::LoadOptions o;
  o.dtype = at::kDouble;
  return o;
}

// A weight matrix or vector with values of a sensible size for a tiny model: N(mean, std²), stored fp32.
inline at::Tensor random_weight(at::IntArrayRef shape, double stddev, double mean = 0.0) {
  return at::randn(shape, at::TensorOptions().dtype(at::kFloat)) * stddev + mean;
}

// Writes config.json and model.safetensors (metadata {"format": "pt"}, as transformers writes it), with the
// tensors in `dtype` (fp32 or bf16).
inline void write_hf_checkpoint(const std::string& dir, const Json& config, const Weights& weights,
                                at::ScalarType dtype = at::kFloat) {
  NamedTensors tensors;
  for (const auto& [name, tensor] : weights) tensors.emplace_back(name, tensor.to(dtype));
  save_safetensors(dir + "/model.safetensors", tensors, {{"format", "pt"}});
  write_file(dir + "/config.json", config.dump(2));
}

// The stored weights as the reference uses them: fp64 copies of exactly what the file holds.
inline Weights as_float64(const Weights& weights, at::ScalarType stored) {
  Weights out;
  for (const auto& [name, tensor] : weights) out[name] = tensor.to(stored).to(at::kDouble);
  return out;
}

inline const at::Tensor& weight(const Weights& w, const std::string& name) {
  auto it = w.find(name);
  if (it == w.end()) throw std::runtime_error("reference: no weight " + name);
  return it->second;
}

inline std::string layer_name(int64_t layer, const std::string& rest) {
  return "model.layers." + std::to_string(layer) + "." + rest;
}

// y = x Wᵀ (+ b): x (N, in), W (out, in) -> (N, out).
inline at::Tensor apply_linear(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b = {}) {
  auto y = at::matmul(x, w.t());
  return b.defined() ? y + b : y;
}

// RMS of each row: x (..., D) / sqrt(mean(x²) + eps).
inline at::Tensor rms_normalize(const at::Tensor& x, double eps) {
  return x / at::sqrt((x * x).mean(-1, /*keepdim=*/true) + eps);
}

inline at::Tensor silu_reference(const at::Tensor& x) { return x / (1.0 + at::exp(-x)); }

// gelu_pytorch_tanh: 0.5 x (1 + tanh(sqrt(2/π) (x + 0.044715 x³))).
inline at::Tensor gelu_tanh(const at::Tensor& x) {
  const double c = std::sqrt(2.0 / 3.14159265358979323846);
  return 0.5 * x * (1.0 + at::tanh(c * (x + 0.044715 * x * x * x)));
}

// θ_i = base^(-2i/D), i < D/2, without scaling.
inline std::vector<double> rope_frequencies(int64_t head_dim, double base) {
  std::vector<double> inv_freq;
  for (int64_t i = 0; i < head_dim / 2; ++i)
    inv_freq.push_back(std::pow(base, -2.0 * static_cast<double>(i) / static_cast<double>(head_dim)));
  return inv_freq;
}

// Rotate-half RoPE of one head: x (N, D), position p = row index; dimension i pairs with i + D/2:
//   x'_i = x_i cos(p θ_i) − x_{i+D/2} sin(p θ_i),  x'_{i+D/2} = x_{i+D/2} cos(p θ_i) + x_i sin(p θ_i).
inline at::Tensor rope_rotate(const at::Tensor& x, const std::vector<double>& inv_freq) {
  const int64_t n = x.size(0), half = static_cast<int64_t>(inv_freq.size());
  auto in = x.contiguous();
  auto out = at::empty_like(in);
  auto a = in.accessor<double, 2>();
  auto o = out.accessor<double, 2>();
  for (int64_t p = 0; p < n; ++p)
    for (int64_t i = 0; i < half; ++i) {
      const double angle = static_cast<double>(p) * inv_freq[i];
      const double c = std::cos(angle), s = std::sin(angle);
      o[p][i] = a[p][i] * c - a[p][i + half] * s;
      o[p][i + half] = a[p][i + half] * c + a[p][i] * s;
    }
  return out;
}

// Causal softmax attention of one head: q, k, v (N, D). Query i sees key j iff j <= i and, with a window
// w > 0, i − w < j (itself and the w − 1 previous keys). Optional logit soft-cap c: s -> c tanh(s / c).
inline at::Tensor attend(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, double scale,
                         int64_t window, double softcap = 0.0) {
  const int64_t n = q.size(0);
  auto scores = at::matmul(q, k.t()) * scale;  // (N, N)
  if (softcap > 0) scores = softcap * at::tanh(scores / softcap);
  auto mask = at::zeros({n, n}, at::TensorOptions().dtype(at::kBool));
  auto m = mask.accessor<bool, 2>();
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) m[i][j] = j > i || (window > 0 && i - j >= window);
  scores = scores.masked_fill(mask, -std::numeric_limits<double>::infinity());
  auto e = at::exp(scores - std::get<0>(scores.max(-1, /*keepdim=*/true)));
  return at::matmul(e / e.sum(-1, /*keepdim=*/true), v);
}

// Multi-head attention with grouped kv heads: q (N, Hq·D), k, v (N, Hkv·D) already projected. `prepare`
// turns a head's (N, D) query or key into what is attended (norm, RoPE). Query head h uses kv head
// h / (Hq / Hkv) (HF repeat_kv). Returns (N, Hq·D).
inline at::Tensor grouped_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, int64_t heads,
                                    int64_t kv_heads, int64_t head_dim,
                                    const std::function<at::Tensor(const at::Tensor&, bool is_query)>& prepare,
                                    double scale, int64_t window, double softcap = 0.0) {
  std::vector<at::Tensor> outs;
  const int64_t rep = heads / kv_heads;
  for (int64_t h = 0; h < heads; ++h) {
    const int64_t g = h / rep;
    auto qh = prepare(q.narrow(1, h * head_dim, head_dim), true);
    auto kh = prepare(k.narrow(1, g * head_dim, head_dim), false);
    auto vh = v.narrow(1, g * head_dim, head_dim);
    outs.push_back(attend(qh, kh, vh, scale, window, softcap));
  }
  return at::cat(outs, 1);
}

// bf16 rounding of an fp32 value, round to nearest even (specs/hf-formats.md §1.5), written out on the bits.
inline float round_to_bf16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  bits += 0x7FFF + ((bits >> 16) & 1);
  bits &= 0xFFFF0000u;
  float out;
  std::memcpy(&out, &bits, sizeof out);
  return out;
}

}  // namespace swarmt::testing::hf
