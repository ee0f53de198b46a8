// Matrix-vector products for decoding: y = x Wᵀ (+ b) when x has only a few rows (one token per
// sequence), with W stored row-major as nn.Linear keeps it, (out, in), in fp32 or bf16.
//
// Why not at::linear: with one row, a GEMM library call spends most of its time on dispatch, packing
// and (for bf16) converting W, while the product itself is a single streaming read of W. Decoding is
// bound by that read, so the kernel reads each weight once and accumulates in fp32: bf16 weights are
// widened to fp32 in registers (a 16-bit shift, exact), or, with AVX-512 BF16 and bf16 activations,
// multiplied in pairs by dot-product instructions (products of two bf16 values are exact in fp32). The
// result is the fp32 product of the stored values, rounded once to the output dtype. Output rows are split
// with at::parallel_for, so no second thread pool competes with OpenMP/BLAS (on several threads only in a
// build with -DSWARMT_OPENMP=ON; docs/performance.md says why that is off by default).
//
// The SIMD level (AVX-512 BF16, AVX-512, AVX2 + FMA, portable C++) is chosen once at run time from the
// CPU's flags.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <string>

namespace swarmt::ops {

// The most rows of x the matvec path takes; beyond it a GEMM reuses W from cache and is faster.
constexpr int64_t kMatvecMaxRows = 4;

// True when matvec_linear can compute at::linear(x, weight, bias): CPU tensors, x with at most
// kMatvecMaxRows rows (over all leading dimensions), W contiguous (out, in) in fp32 or bf16, x in
// fp32 or bf16, and no autograd graph to record.
bool matvec_applies(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias);

// y = x Wᵀ + b in x's dtype (fp32 accumulation); shapes as at::linear. Requires matvec_applies.
at::Tensor matvec_linear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias = {});

// at::linear, through the matvec kernel when it applies.
at::Tensor linear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias = {});

// The kernels on raw row-major buffers, on the calling thread (for callers that split work their own
// way): y[r * ldy + o] = Σ_i W[o * in + i] x[r * in + i] for o < out, r < rows, accumulated in fp32.
void matvec_rows(const float* w, int64_t out, int64_t in, const float* x, int64_t rows, float* y, int64_t ldy);
void matvec_rows(const at::BFloat16* w, int64_t out, int64_t in, const at::BFloat16* x, int64_t rows, float* y,
                 int64_t ldy);

// The kernel level in use: "avx512-bf16", "avx512", "avx2" or "portable" (reported by benchmarks).
std::string matvec_isa();

// Selects a lower kernel level than the CPU's best, so that tests and benchmarks run every level on
// one machine. False (nothing changed) for an unknown name or a level this CPU lacks.
bool set_matvec_isa(const std::string& name);

}  // namespace swarmt::ops
