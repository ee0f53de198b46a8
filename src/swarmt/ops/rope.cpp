// RoPE tables and rotation (see rope.h for the pairing and why angles are fp64).
#include "swarmt/ops/rope.h"

#include <cmath>
#include <vector>

#include "swarmt/core/error.h"
#include "swarmt/ops/rope_cpu.h"

namespace swarmt::ops {
namespace {

constexpr double kPi = 3.14159265358979323846;

// HF `_compute_llama3_parameters`: wavelengths longer than original_max / low_freq_factor are slowed down
// by `factor`, those shorter than original_max / high_freq_factor are kept, and the band in between
// interpolates smoothly between the two:
//   s = (original_max / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor)
//   θ' = (1 - s) θ / factor + s θ
double llama3_scaled(double inv_freq, const RopeScaling& scaling) {
  const double old_context = static_cast<double>(scaling.original_max_position_embeddings);
  const double low_freq_wavelen = old_context / scaling.low_freq_factor;
  const double high_freq_wavelen = old_context / scaling.high_freq_factor;
  const double wavelen = 2.0 * kPi / inv_freq;
  if (wavelen > low_freq_wavelen) return inv_freq / scaling.factor;
  if (wavelen < high_freq_wavelen) return inv_freq;
  const double smooth = (old_context / wavelen - scaling.low_freq_factor) /
                        (scaling.high_freq_factor - scaling.low_freq_factor);
  return (1.0 - smooth) * inv_freq / scaling.factor + smooth * inv_freq;
}

void check_scaling(const RopeScaling& scaling) {
  const std::string& type = scaling.type;
  SWARMT_CHECK_INPUT(type == "none" || type == "default" || type == "linear" || type == "llama3",
                     "rope_scaling: unsupported type \"", type, "\" (supported: none, linear, llama3)");
  if (type == "none" || type == "default") return;
  SWARMT_CHECK_INPUT(scaling.factor > 0.0 && std::isfinite(scaling.factor),
                     "rope_scaling.factor must be a positive number, got ", scaling.factor);
  if (type == "llama3") {
    SWARMT_CHECK_INPUT(scaling.low_freq_factor > 0.0 && scaling.high_freq_factor > scaling.low_freq_factor,
                       "rope_scaling: llama3 needs 0 < low_freq_factor < high_freq_factor, got ",
                       scaling.low_freq_factor, " and ", scaling.high_freq_factor);
    SWARMT_CHECK_INPUT(scaling.original_max_position_embeddings > 0,
                       "rope_scaling.original_max_position_embeddings must be positive, got ",
                       scaling.original_max_position_embeddings);
  }
}


// --- Loops for a decode step (a few positions, no autograd): the same values as the ATen ops below,
// without their dozen dispatches per layer and token.

constexpr int64_t kRopeLoopMaxElements = 1 << 14;

bool few_positions_on_cpu(const at::Tensor& positions, const at::Tensor& inv_freq) {
  return positions.device().is_cpu() && inv_freq.device().is_cpu() && positions.numel() <= 16 &&
         positions.scalar_type() == at::kLong && inv_freq.scalar_type() == at::kDouble && inv_freq.is_contiguous();
}

template <typename T>
std::pair<at::Tensor, at::Tensor> rope_cos_sin_typed(const at::Tensor& positions, const at::Tensor& inv_freq) {
  const at::Tensor p = positions.contiguous();
  const int64_t n = p.numel(), half = inv_freq.numel();
  std::vector<int64_t> shape(p.sizes().begin(), p.sizes().end());
  shape.push_back(half);
  const auto options = at::TensorOptions().dtype(c10::CppTypeToScalarType<T>::value);
  at::Tensor cos = at::empty(shape, options), sin = at::empty(shape, options);
  const int64_t* pp = p.data_ptr<int64_t>();
  const double* fp = inv_freq.data_ptr<double>();
  T* cp = cos.data_ptr<T>();
  T* sp = sin.data_ptr<T>();
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < half; ++i) {
      const double angle = static_cast<double>(pp[j]) * fp[i];  // p · θ_i in fp64, then cast
      cp[j * half + i] = static_cast<T>(std::cos(angle));
      sp[j * half + i] = static_cast<T>(std::sin(angle));
    }
  return {cos, sin};
}

std::pair<at::Tensor, at::Tensor> rope_cos_sin_loop(const at::Tensor& positions, const at::Tensor& inv_freq,
                                                    at::ScalarType dtype) {
  if (dtype == at::kFloat) return rope_cos_sin_typed<float>(positions, inv_freq);
  if (dtype == at::kBFloat16) return rope_cos_sin_typed<at::BFloat16>(positions, inv_freq);
  return rope_cos_sin_typed<double>(positions, inv_freq);
}

bool rope_loop_applies(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin) {
  const auto dtype = x.scalar_type();
  if (!x.device().is_cpu() || !cos.device().is_cpu() || !sin.device().is_cpu()) return false;
  if ((dtype != at::kFloat && dtype != at::kBFloat16) || x.numel() > kRopeLoopMaxElements || x.numel() == 0) return false;
  for (const auto* t : {&cos, &sin})
    if (t->scalar_type() != at::kFloat && t->scalar_type() != at::kBFloat16 && t->scalar_type() != at::kDouble)
      return false;
  return !at::GradMode::is_enabled() || (!x.requires_grad() && !cos.requires_grad() && !sin.requires_grad());
}

// The table value for (batch b, position j, frequency i) cast to T, as `.to(x.dtype())` casts it.
template <typename T>
T table_value(const at::Tensor& table, int64_t b, int64_t j, int64_t i) {
  const int64_t offset = (table.dim() == 3 ? b * table.stride(0) : 0) + j * table.stride(-2) + i * table.stride(-1);
  switch (table.scalar_type()) {
    case at::kFloat: return static_cast<T>(table.data_ptr<float>()[offset]);
    case at::kBFloat16: return static_cast<T>(static_cast<float>(table.data_ptr<at::BFloat16>()[offset]));
    default: return static_cast<T>(table.data_ptr<double>()[offset]);
  }
}

// x1' = x1 c − x2 s, x2' = x2 c + x1 s, each product and sum rounded to T as the ATen ops round them.
template <typename T>
at::Tensor apply_rope_loop(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin) {
  const at::Tensor xc = x.contiguous();
  const int64_t batch = x.size(0), heads = x.size(1), length = x.size(2), d = x.size(3), half = cos.size(-1);
  at::Tensor out = at::empty_like(xc);
  const T* xp = xc.data_ptr<T>();
  T* op = out.data_ptr<T>();
  std::vector<float> c(static_cast<size_t>(half)), s(static_cast<size_t>(half));
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t j = 0; j < length; ++j) {
      for (int64_t i = 0; i < half; ++i) {
        c[i] = static_cast<float>(table_value<T>(cos, b, j, i));
        s[i] = static_cast<float>(table_value<T>(sin, b, j, i));
      }
      for (int64_t h = 0; h < heads; ++h) {
        const int64_t row = ((b * heads + h) * length + j) * d;
        rope_rotate_row(xp + row, d, half, c.data(), s.data(), op + row);
      }
    }
  return out;
}

}  // namespace

at::Tensor rope_inv_freq(int64_t rotary_dim, double base, const RopeScaling& scaling) {
  SWARMT_CHECK_INPUT(rotary_dim > 0 && rotary_dim % 2 == 0, "RoPE: rotary dimension must be positive and even, got ",
                     rotary_dim);
  SWARMT_CHECK_INPUT(base > 1.0 && std::isfinite(base), "RoPE: rope_theta must be a finite number > 1, got ", base);
  check_scaling(scaling);
  const int64_t half = rotary_dim / 2;
  std::vector<double> values(static_cast<size_t>(half));
  for (int64_t i = 0; i < half; ++i) {
    // θ_i = base^(-2i/D)
    double inv_freq = 1.0 / std::pow(base, static_cast<double>(2 * i) / static_cast<double>(rotary_dim));
    if (scaling.type == "linear") inv_freq /= scaling.factor;  // positions / factor
    if (scaling.type == "llama3") inv_freq = llama3_scaled(inv_freq, scaling);
    values[static_cast<size_t>(i)] = inv_freq;
  }
  return at::tensor(values, at::TensorOptions().dtype(at::kDouble));
}

std::pair<at::Tensor, at::Tensor> rope_cos_sin(const at::Tensor& positions, const at::Tensor& inv_freq,
                                               at::ScalarType dtype) {
  SWARMT_CHECK_INPUT(positions.defined() && (positions.dim() == 1 || positions.dim() == 2) &&
                         !at::isFloatingType(positions.scalar_type()),
                     "RoPE: positions must be an integer tensor of shape (N) or (B, N), got ",
                     positions.defined() ? positions.sizes() : at::IntArrayRef{});
  SWARMT_CHECK_INPUT(inv_freq.defined() && inv_freq.dim() == 1, "RoPE: inv_freq must have shape (D/2)");
  if (few_positions_on_cpu(positions, inv_freq) && (dtype == at::kFloat || dtype == at::kBFloat16 || dtype == at::kDouble))
    return rope_cos_sin_loop(positions, inv_freq, dtype);
  // angles (…, N, D/2) = p · θ_i in fp64: exact enough at p = 131071 (error ~1e-11 rad, fp32 would give 1e-2).
  auto angles = positions.to(at::kDouble).unsqueeze(-1) * inv_freq.to(positions.device(), at::kDouble);
  return {angles.cos().to(dtype), angles.sin().to(dtype)};
}

at::Tensor apply_rope(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin) {
  SWARMT_CHECK_INPUT(x.defined() && x.dim() == 4, "RoPE: x must have shape (B, H, N, D)");
  SWARMT_CHECK_INPUT(cos.defined() && sin.defined() && cos.sizes() == sin.sizes() &&
                         (cos.dim() == 2 || cos.dim() == 3),
                     "RoPE: cos and sin must both have shape (N, D/2) or (B, N, D/2)");
  const int64_t batch = x.size(0), length = x.size(2), head_dim = x.size(3);
  const int64_t half = cos.size(-1);
  SWARMT_CHECK_INPUT(cos.size(-2) == length && 2 * half <= head_dim && (cos.dim() == 2 || cos.size(0) == batch),
                     "RoPE: tables of shape ", cos.sizes(), " do not fit x of shape ", x.sizes(),
                     " (need (N, D/2) or (B, N, D/2) with N = ", length, ", D/2 <= ", head_dim / 2, ")");
  if (rope_loop_applies(x, cos, sin))
    return x.scalar_type() == at::kFloat ? apply_rope_loop<float>(x, cos, sin) : apply_rope_loop<at::BFloat16>(x, cos, sin);
  // Training in fp32 on the CPU: one fused pass forward and one backward.
  if (at::GradMode::is_enabled() && x.requires_grad() && apply_rope_cpu_applies(x, cos, sin))
    return apply_rope_cpu(x, cos, sin);
  // (N, h) -> (1, 1, N, h); (B, N, h) -> (B, 1, N, h); in x's dtype so the result keeps it.
  auto c = (cos.dim() == 2 ? cos.unsqueeze(0) : cos).unsqueeze(1).to(x.dtype());
  auto s = (sin.dim() == 2 ? sin.unsqueeze(0) : sin).unsqueeze(1).to(x.dtype());
  auto x1 = x.narrow(-1, 0, half);     // (B, H, N, h)
  auto x2 = x.narrow(-1, half, half);  // (B, H, N, h), paired with x1 element by element
  auto rotated1 = x1 * c - x2 * s;
  auto rotated2 = x2 * c + x1 * s;
  if (2 * half == head_dim) return at::cat({rotated1, rotated2}, -1);
  // Partial rotary embedding: the dimensions after the rotated 2·h pass through unchanged.
  return at::cat({rotated1, rotated2, x.narrow(-1, 2 * half, head_dim - 2 * half)}, -1);
}

}  // namespace swarmt::ops
