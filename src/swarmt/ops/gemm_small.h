// Small fp32 GEMMs on raw row-major buffers, for the CPU kernels that work block by block (attention
// bands): C = alpha · A · B + beta · C with B row-major and A read with any strides, so Aᵀ costs nothing.
//
// Why not BLAS: at the blocks' shapes (64 × 191 × 64 and the like) OpenBLAS spends most of each call
// packing panels it then uses a few times (measured: the blocked attention at 7–8 % of the FMA peak with
// BLAS on raw buffers). The kernel here keeps a tile of C in registers (8 × 48 in 24 AVX-512 registers;
// 4 × 24 in 12 AVX2 registers on CPUs without AVX-512) and streams rows of B, so nothing is packed; B's
// rows stay in L1/L2 across the tiles of one call.
#pragma once

#include <cstdint>

namespace swarmt::ops {

// C[i·ldc + j] = alpha · Σ_k A[i·a_row + k·a_col] · B[k·ldb + j] + beta · C[i·ldc + j], i < m, j < n.
// beta == 0 never reads C. The AVX-512 or AVX2 kernel as the kernel level allows (see matvec.h's
// set_matvec_isa), plain loops otherwise.
void gemm_small(int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t a_row, int64_t a_col,
                const float* b, int64_t ldb, float beta, float* c, int64_t ldc);

// dst (cols × rows, row stride ld_dst) = srcᵀ (rows × cols, row stride ld_src): the right-hand sides
// gemm_small needs for products with a transposed B. 8 × 8 register transposes at the AVX2 and AVX-512
// kernel levels (a plain loop writes one strided element per store), plain loops otherwise.
void transpose_small(const float* src, int64_t rows, int64_t cols, int64_t ld_src, float* dst, int64_t ld_dst);

// Whether gemm_small runs a vector kernel, AVX-512 or AVX2 (false: its plain loops, which callers may
// prefer to BLAS).
bool gemm_small_is_vectorized();

}  // namespace swarmt::ops
