// Matrix-vector products for decoding: y = x Wᵀ (+ b) when x has only a few rows (one token per
// sequence), with W stored row-major as nn.Linear keeps it, (out, in), in fp32 or bf16.
//
// Why not at::linear: with one row, a GEMM library call spends most of its time on dispatch, packing
// and (for bf16) converting W, while the product itself is a single streaming read of W. Decoding is
// bound by that read, so the kernel reads each weight once and accumulates in fp32: bf16 weights are
// widened to fp32 in registers (a 16-bit shift, exact), or, with AVX-512 BF16 and bf16 activations,
// multiplied in pairs by dot-product instructions (products of two bf16 values are exact in fp32). The
// result is the fp32 product of the stored values, rounded once to the output dtype. Output rows are split
// over threads by hot_parallel_for (hot_pool.h): workers that stay awake across a decode step and sleep
// when no decode runs, so they neither pay a wake-up per product nor take the cores from BLAS.
//
// The SIMD level (AVX-512 BF16, AVX-512, AVX2 + FMA, portable C++) is chosen once at run time from the
// CPU's flags.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <string>
#include <vector>

namespace swarmt::ops {

// The most rows of x the matvec path takes; beyond it a GEMM reuses W from cache and is faster.
constexpr int64_t kMatvecMaxRows = 4;

// True when matvec_linear can compute at::linear(x, weight, bias): CPU tensors, x with at most
// kMatvecMaxRows rows (over all leading dimensions), W contiguous (out, in) in fp32 or bf16, x in
// fp32 or bf16, and no autograd graph to record.
bool matvec_applies(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias);

// y = x Wᵀ + b in x's dtype (fp32 accumulation); shapes as at::linear. Requires matvec_applies.
at::Tensor matvec_linear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias = {});

// at::linear, through the matvec kernel when it applies, or in training through ops/dense_linear.h's
// products when they apply.
at::Tensor linear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias = {});

// Several products of the same x (q, k and v; gate and up) in one parallel pass, so the threads meet
// once instead of once per weight: ys[j] = x W_jᵀ + b_j. `biases` is empty or one (possibly undefined)
// tensor per weight. matvec_linear_group requires matvec_applies for each. Otherwise linear_group, when
// it records a graph (training), multiplies by the weights concatenated, one GEMM instead of one per
// weight forward and one instead of several plus their sum for x's gradient, and returns views of the
// one result; without a graph it runs at::linear per weight.
std::vector<at::Tensor> matvec_linear_group(const at::Tensor& x, at::ArrayRef<at::Tensor> weights,
                                            at::ArrayRef<at::Tensor> biases = {});
std::vector<at::Tensor> linear_group(const at::Tensor& x, at::ArrayRef<at::Tensor> weights,
                                     at::ArrayRef<at::Tensor> biases = {});

// The products of x with each weight side by side, unrounded: (rows, Σ out_j) in fp32, for callers that
// finish the computation in fp32 (the gated MLP's activation). Requires matvec_applies for each weight
// (no bias), all of one dtype.
at::Tensor matvec_group_fp32(const at::Tensor& x, at::ArrayRef<at::Tensor> weights);

// matvec_group_fp32 on raw buffers: y (rows, Σ outs[j]) = x W_jᵀ for W_j (outs[j], in) row-major, in one
// parallel pass with the same split (so the same sums) as matvec_group_fp32. At most 15 weights.
void matvec_group_rows(at::ArrayRef<const float*> weights, at::ArrayRef<int64_t> outs, int64_t in, const float* x,
                       int64_t rows, float* y);
void matvec_group_rows(at::ArrayRef<const at::BFloat16*> weights, at::ArrayRef<int64_t> outs, int64_t in,
                       const at::BFloat16* x, int64_t rows, float* y);

// The kernels on raw row-major buffers, on the calling thread (for callers that split work their own
// way): y[r * ldy + o] = Σ_i W[o * in + i] x[r * in + i] for o < out, r < rows, accumulated in fp32.
void matvec_rows(const float* w, int64_t out, int64_t in, const float* x, int64_t rows, float* y, int64_t ldy);
void matvec_rows(const at::BFloat16* w, int64_t out, int64_t in, const at::BFloat16* x, int64_t rows, float* y,
                 int64_t ldy);

// The other two loops of decode attention, at the same kernel level:
// y[r * d + j] += Σ_s p[r * ldp + s] V[s * d + j] for r < rows, j < d (V row-major (slots, d)); each row
// of V is read once for all rows of p.
void vecmat_rows(const float* v, int64_t slots, int64_t d, const float* p, int64_t rows, int64_t ldp, float* y);
void vecmat_rows(const at::BFloat16* v, int64_t slots, int64_t d, const float* p, int64_t rows, int64_t ldp,
                 float* y);

// The kernel level in use: "avx512-bf16", "avx512", "avx2" or "portable" (reported by benchmarks).
std::string matvec_isa();
// Whether that level has AVX-512 (the other raw-buffer kernels follow the same level).
bool matvec_has_avx512();
// Whether that level has AVX2 and FMA (true at every AVX-512 level too).
bool matvec_has_avx2();

// Selects a lower kernel level than the CPU's best, so that tests and benchmarks run every level on
// one machine. False (nothing changed) for an unknown name or a level this CPU lacks.
bool set_matvec_isa(const std::string& name);

}  // namespace swarmt::ops
