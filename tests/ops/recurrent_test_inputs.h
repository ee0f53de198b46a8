// Random fp64 inputs for the recurrent-kernel tests (mLSTM, Gated DeltaNet) and a finite-difference
// helper. Header-only; every generator takes an explicit seed so each test is reproducible on its own.
#pragma once

#include <ATen/ATen.h>

#include <functional>
#include <vector>

namespace swarmt::testing {

inline at::TensorOptions f64() { return at::TensorOptions().dtype(at::kDouble); }

// Agreement required between two fp64 forms of the same recurrence (chunkwise vs recurrent vs reference).
inline constexpr double kTol = 1e-10;

struct MLSTMInputs {
  at::Tensor q, k, v;  // (B, H, N, Dqk|Dv)
  at::Tensor igate;    // (B, H, N)
  at::Tensor fgate;    // (B, H, N)
};

// Gate pre-activations spread like the spec's oracle: ĩ ~ N(0, 2²), f̃ ~ N(3, 2²) (some rows hit the
// normaliser clamp, some forget fast).
inline MLSTMInputs random_mlstm_inputs(int64_t batch, int64_t heads, int64_t length, int64_t qk_dim, int64_t v_dim,
                                       uint64_t seed) {
  at::Generator gen = at::detail::createCPUGenerator(seed);
  MLSTMInputs in;
  in.q = at::randn({batch, heads, length, qk_dim}, gen, f64());
  in.k = at::randn({batch, heads, length, qk_dim}, gen, f64());
  in.v = at::randn({batch, heads, length, v_dim}, gen, f64());
  in.igate = at::randn({batch, heads, length}, gen, f64()) * 2.0;
  in.fgate = at::randn({batch, heads, length}, gen, f64()) * 2.0 + 3.0;
  return in;
}

struct GatedDeltaInputs {
  at::Tensor q, k, v;  // q, k L2-normalised as the layer does
  at::Tensor beta;     // (B, H, N) in (0, 1)
  at::Tensor g;        // (B, H, N) log decay <= 0
};

inline GatedDeltaInputs random_gated_delta_inputs(int64_t batch, int64_t heads, int64_t length, int64_t k_dim,
                                                  int64_t v_dim, uint64_t seed) {
  at::Generator gen = at::detail::createCPUGenerator(seed);
  auto l2 = [](const at::Tensor& x) { return x / at::sqrt((x * x).sum(-1, true) + 1e-6); };
  GatedDeltaInputs in;
  in.q = l2(at::randn({batch, heads, length, k_dim}, gen, f64()));
  in.k = l2(at::randn({batch, heads, length, k_dim}, gen, f64()));
  in.v = at::randn({batch, heads, length, v_dim}, gen, f64());
  in.beta = at::sigmoid(at::randn({batch, heads, length}, gen, f64()));
  in.g = -at::softplus(at::randn({batch, heads, length}, gen, f64())) * 0.5;
  return in;
}

// Resets (B, N) with true at the given positions of every batch row (and row b shifted by b, so rows
// differ).
inline at::Tensor resets_at(int64_t batch, int64_t length, const std::vector<int64_t>& positions) {
  at::Tensor r = at::zeros({batch, length}, at::TensorOptions().dtype(at::kBool));
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t p : positions)
      if (p + b < length) r[b][p + b] = true;
  return r;
}

// Central finite-difference gradient of a scalar function wrt every entry of `x` (modified in place and
// restored).
inline at::Tensor finite_difference(const std::function<double()>& loss, at::Tensor x, double h = 1e-6) {
  at::Tensor grad = at::zeros_like(x);
  at::Tensor flat = x.view(-1);
  at::Tensor grad_flat = grad.view(-1);
  for (int64_t i = 0; i < flat.numel(); ++i) {
    double old = flat[i].item<double>();
    flat[i] = old + h;
    double plus = loss();
    flat[i] = old - h;
    double minus = loss();
    flat[i] = old;
    grad_flat[i] = (plus - minus) / (2 * h);
  }
  return grad;
}

}  // namespace swarmt::testing
