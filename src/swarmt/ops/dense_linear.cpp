#include "swarmt/ops/dense_linear.h"

#include <ATen/Parallel.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <torch/csrc/autograd/custom_function.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <vector>

#include "swarmt/ops/gemm_small.h"

namespace swarmt::ops {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

constexpr int64_t kMaxWeightBytes = int64_t{1} << 20;
constexpr int64_t kMinRows = 64;
constexpr int64_t kMinDim = 16;
constexpr int64_t kRowBlock = 64;  // rows of X (and dY) per step of dW's sum (see transposed_times)
constexpr int64_t kStrip = 8;       // gemm_small's row tile

std::atomic<bool>& kernels_on() {
  static std::atomic<bool> on{true};
  return on;
}

// C (rows × n) = A (rows × k, element (r, p) at a[r · a_row + p · a_col]) · B (k × n, row-major) + bias
// (n, or null) on every row, the rows in strips of 8 spread over the intra-op threads.
void rows_times(int64_t rows, int64_t n, int64_t k, const float* a, int64_t a_row, int64_t a_col, const float* b,
                const float* bias, float* c) {
  const int64_t strips = (rows + kStrip - 1) / kStrip;
  at::parallel_for(0, strips, kMinRows / kStrip, [&](int64_t s0, int64_t s1) {
    const int64_t r0 = s0 * kStrip, r1 = std::min(rows, s1 * kStrip);
    gemm_small(r1 - r0, n, k, 1.0f, a + r0 * a_row, a_row, a_col, b, n, 0.0f, c + r0 * n, n);
    if (bias)
      for (int64_t r = r0; r < r1; ++r)
        for (int64_t j = 0; j < n; ++j) c[r * n + j] += bias[j];
  });
}

// A gradient piece dY_j (rows × n_j, element (r, c) at data[r · row + c · col]) and its rows of W.
struct GradPiece {
  const float* data;
  int64_t row, col, n;
  const float* weight;  // (n × k) rows of W, row-major
};

// dX (rows × k) = Σ_j dY_j W_j: the pieces of one 8-row strip one after another into the strip of dX,
// which stays in L1 (the first with beta = 0).
void pieces_times(int64_t rows, int64_t k, const std::vector<GradPiece>& pieces, float* dx) {
  const int64_t strips = (rows + kStrip - 1) / kStrip;
  at::parallel_for(0, strips, kMinRows / kStrip, [&](int64_t s0, int64_t s1) {
    for (int64_t s = s0; s < s1; ++s) {
      const int64_t r0 = s * kStrip, r1 = std::min(rows, r0 + kStrip);
      for (size_t j = 0; j < pieces.size(); ++j) {
        const GradPiece& g = pieces[j];
        gemm_small(r1 - r0, k, g.n, 1.0f, g.data + r0 * g.row, g.row, g.col, g.weight, k, j == 0 ? 0.0f : 1.0f,
                   dx + r0 * k, k);
      }
    }
  });
}

// dW (n × k) = dYᵀ X, dY (rows × n, element (r, c) at dy[r · dy_row + c · dy_col]), X (rows × k).
// Each thread sums its share of the rows into its own copy of dW (thread 0 into dW itself), in blocks
// of kRowBlock rows; every 8-row strip of dW reads the whole block of X, which at 64 rows (32 KiB for
// k = 128) stays in L1 (in a training step of the demo, 256-row blocks ran this product at 148–176
// GFLOP/s, 1024-row ones at 119–164, 64-row ones at 150–192). A strip's part of dY (kRowBlock × 8, a
// column slice) is first copied to a contiguous buffer: read in place, its rows are n floats apart,
// which for n = 128 · 2^j or 768 puts all of them in 4–8 of L1's 64 sets.
void transposed_times(int64_t rows, int64_t n, int64_t k, const float* dy, int64_t dy_row, int64_t dy_col,
                      const float* x, float* dw) {
  const int64_t threads = std::max<int64_t>(1, std::min<int64_t>(at::get_num_threads(), rows / kRowBlock));
  // Every copy is written before it is read (its first block runs with beta = 0): no zeroing.
  const std::unique_ptr<float[]> partials(new float[static_cast<size_t>((threads - 1) * n * k)]);
  at::parallel_for(0, threads, 1, [&](int64_t t0, int64_t t1) {
    std::vector<float> slice(static_cast<size_t>(kRowBlock * kStrip));
    for (int64_t t = t0; t < t1; ++t) {
      float* out = t == 0 ? dw : partials.get() + (t - 1) * n * k;
      const int64_t r0 = rows * t / threads, r1 = rows * (t + 1) / threads;
      for (int64_t m0 = r0; m0 < r1; m0 += kRowBlock) {
        const int64_t m1 = std::min(r1, m0 + kRowBlock);
        for (int64_t n0 = 0; n0 < n; n0 += kStrip) {
          const int64_t width = std::min(kStrip, n - n0);
          for (int64_t m = m0; m < m1; ++m) {
            const float* src = dy + m * dy_row + n0 * dy_col;
            float* dst = slice.data() + (m - m0) * kStrip;
            for (int64_t c = 0; c < width; ++c) dst[c] = src[c * dy_col];
          }
          gemm_small(width, k, m1 - m0, 1.0f, slice.data(), 1, kStrip, x + m0 * k, k, m0 == r0 ? 0.0f : 1.0f,
                     out + n0 * k, k);
        }
      }
    }
  });
  if (threads == 1) return;
  at::parallel_for(0, n * k, 4096, [&](int64_t i0, int64_t i1) {
    for (int64_t t = 1; t < threads; ++t) {
      const float* part = partials.get() + (t - 1) * n * k;
      for (int64_t i = i0; i < i1; ++i) dw[i] += part[i];
    }
  });
}

std::vector<int64_t> with_last(at::IntArrayRef shape, int64_t last) {
  std::vector<int64_t> out(shape.begin(), shape.end());
  out.back() = last;
  return out;
}

// The forward of both autograd functions: y = x Wᵀ + b (b undefined: none) with x's shape and out
// columns; saves X as rows and W for the backward.
at::Tensor forward_product(AutogradContext* ctx, const at::Tensor& x, const at::Tensor& weight,
                           const at::Tensor& bias) {
  const int64_t out = weight.size(0), in = weight.size(1);
  const at::Tensor x2 = x.reshape({-1, in}).contiguous();
  const at::Tensor w = weight.contiguous();
  const at::Tensor w_t = w.t().contiguous();  // (in, out): gemm_small's right-hand side is row-major
  const at::Tensor b = bias.defined() ? bias.contiguous() : bias;
  at::Tensor y = at::empty({x2.size(0), out}, x2.options());
  rows_times(x2.size(0), out, in, x2.data_ptr<float>(), in, 1, w_t.data_ptr<float>(),
             b.defined() ? b.data_ptr<float>() : nullptr, y.data_ptr<float>());
  ctx->save_for_backward({x2, w});
  ctx->saved_data["x_shape"] = x.sizes().vec();
  return y.view(with_last(x.sizes(), out));
}

// The autograd function, with or without a bias (libtorch 1.13 refuses undefined tensor inputs).
template <bool kBias>
struct DenseLinearFunction : public torch::autograd::Function<DenseLinearFunction<kBias>> {
  template <typename... Bias>
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, const at::Tensor& weight,
                            const Bias&... bias) {
    static_assert(sizeof...(Bias) == (kBias ? 1 : 0));
    at::Tensor b;
    ((b = bias), ...);
    return forward_product(ctx, x, weight, b);
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const variable_list saved = ctx->get_saved_variables();
    const at::Tensor& x2 = saved[0];
    const at::Tensor& w = saved[1];
    const int64_t out = w.size(0), in = w.size(1), rows = x2.size(0);
    variable_list result(kBias ? 3 : 2);
    if (!grads[0].defined()) return result;
    const at::Tensor dy = grads[0].to(at::kFloat).reshape({rows, out}).contiguous();
    if (ctx->needs_input_grad(0)) {
      at::Tensor dx = at::empty({rows, in}, x2.options());
      rows_times(rows, in, out, dy.data_ptr<float>(), out, 1, w.data_ptr<float>(), nullptr, dx.data_ptr<float>());
      result[0] = dx.view(ctx->saved_data["x_shape"].toIntVector());
    }
    if (ctx->needs_input_grad(1)) {
      result[1] = at::empty({out, in}, w.options());
      transposed_times(rows, out, in, dy.data_ptr<float>(), out, 1, x2.data_ptr<float>(), result[1].data_ptr<float>());
    }
    if (kBias && ctx->needs_input_grad(2)) result[2] = dy.sum(0);
    return result;
  }
};

// One product for several weights of the same input (q, k, v, gates), y = x Wᵀ + b with W and b the
// weights and biases stacked, returned as the pieces y_j = x W_jᵀ + b_j: views of one output, as
// split_with_sizes would give. The backward takes the pieces' gradients where they are (any strides, none
// for an unused piece) instead of concatenating them first, which cost a copy of the whole gradient:
//   dX = Σ_j dY_j W_j   (strip by strip, the strip of dX in L1)
//   dW_j = dY_jᵀ X,  db_j = Σ_rows dY_j   (written into the stacked gradients' rows)
template <bool kBias>
struct DenseLinearGroupFunction : public torch::autograd::Function<DenseLinearGroupFunction<kBias>> {
  template <typename... Bias>
  static variable_list forward(AutogradContext* ctx, const std::vector<int64_t>& sizes, const at::Tensor& x,
                               const at::Tensor& weight, const Bias&... bias) {
    static_assert(sizeof...(Bias) == (kBias ? 1 : 0));
    at::Tensor b;
    ((b = bias), ...);
    ctx->saved_data["sizes"] = sizes;
    ctx->set_materialize_grads(false);  // an unused piece's gradient stays undefined, not zeros to read
    return forward_product(ctx, x, weight, b).split_with_sizes(sizes, -1);
  }

  // Gradients are returned per argument (sizes first, which has none); needs_input_grad counts the
  // tensor arguments only: x 0, weight 1, bias 2.
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const variable_list saved = ctx->get_saved_variables();
    const at::Tensor& x2 = saved[0];
    const at::Tensor& w = saved[1];
    const std::vector<int64_t> sizes = ctx->saved_data["sizes"].toIntVector();
    const int64_t in = w.size(1), rows = x2.size(0);
    variable_list result(kBias ? 4 : 3);
    // The pieces with a gradient, as 2-D (rows × n_j) views (a copy only where no view exists).
    std::vector<at::Tensor> g2(sizes.size());
    std::vector<GradPiece> pieces;
    std::vector<int64_t> first(sizes.size());
    for (size_t j = 0, offset = 0; j < sizes.size(); offset += sizes[j], ++j) {
      first[j] = static_cast<int64_t>(offset);
      if (!grads[j].defined()) continue;
      g2[j] = grads[j].to(at::kFloat).reshape({rows, sizes[j]});
      pieces.push_back({g2[j].data_ptr<float>(), g2[j].stride(0), g2[j].stride(1), sizes[j],
                        w.data_ptr<float>() + first[j] * in});
    }
    if (pieces.empty()) return result;
    if (ctx->needs_input_grad(0)) {
      at::Tensor dx = at::empty({rows, in}, x2.options());
      pieces_times(rows, in, pieces, dx.data_ptr<float>());
      result[1] = dx.view(ctx->saved_data["x_shape"].toIntVector());
    }
    if (ctx->needs_input_grad(1)) {
      result[2] = at::empty_like(w);
      float* dw = result[2].data_ptr<float>();
      for (size_t j = 0; j < sizes.size(); ++j) {
        float* rows_j = dw + first[j] * in;
        if (!g2[j].defined()) {
          std::fill(rows_j, rows_j + sizes[j] * in, 0.0f);
          continue;
        }
        transposed_times(rows, sizes[j], in, g2[j].data_ptr<float>(), g2[j].stride(0), g2[j].stride(1),
                         x2.data_ptr<float>(), rows_j);
      }
    }
    if (kBias && ctx->needs_input_grad(2)) {
      at::Tensor db = at::zeros({w.size(0)}, w.options());
      for (size_t j = 0; j < sizes.size(); ++j)
        if (g2[j].defined()) db.narrow(0, first[j], sizes[j]).copy_(g2[j].sum(0));
      result[3] = db;
    }
    return result;
  }
};

bool cpu_float(const at::Tensor& t) { return t.device().is_cpu() && t.scalar_type() == at::kFloat; }

}  // namespace

void set_dense_linear_kernels(bool on) { kernels_on().store(on); }
bool dense_linear_kernels() { return kernels_on().load(); }

bool dense_linear_applies(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
  if (!dense_linear_kernels() || !gemm_small_is_vectorized()) return false;
  if (!x.defined() || !weight.defined() || !cpu_float(x) || !cpu_float(weight)) return false;
  if (weight.dim() != 2 || x.dim() < 2) return false;
  const int64_t out = weight.size(0), in = weight.size(1);
  if (bias.defined() && (!cpu_float(bias) || bias.dim() != 1 || bias.size(0) != out)) return false;
  if (x.size(-1) != in || out < kMinDim || in < kMinDim) return false;
  if (weight.numel() * static_cast<int64_t>(sizeof(float)) > kMaxWeightBytes || x.numel() / in < kMinRows) return false;
  const bool graph = x.requires_grad() || weight.requires_grad() || (bias.defined() && bias.requires_grad());
  if (!at::GradMode::is_enabled() || !graph) return false;
  // Autocast on CPU is on while its dispatch key is not excluded (libtorch 1.13 and 2.x alike).
  return c10::impl::tls_is_dispatch_key_excluded(c10::DispatchKey::AutocastCPU);
}

at::Tensor dense_linear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
  if (bias.defined()) return DenseLinearFunction<true>::apply(x, weight, bias);
  return DenseLinearFunction<false>::apply(x, weight);
}

std::vector<at::Tensor> dense_linear_group(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias,
                                           const std::vector<int64_t>& sizes) {
  if (bias.defined()) return DenseLinearGroupFunction<true>::apply(sizes, x, weight, bias);
  return DenseLinearGroupFunction<false>::apply(sizes, x, weight);
}

}  // namespace swarmt::ops
