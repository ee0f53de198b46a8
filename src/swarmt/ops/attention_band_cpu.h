// Internal to ops/attention_blocked.cpp: the blocked attention's CPU kernels on raw buffers.
//
// The same blocks and equations as the batched-op path (attention_blocked.cpp), but each block's products
// are small-GEMM calls on raw buffers (ops/gemm_small.h; BLAS below AVX-512 and in fp64), and loops fuse
// the mask, soft-cap, softmax and the gradient algebra in one pass per row. The batched-op path ran ~12
// ATen ops per block and OpenBLAS packed panels for products of 64 × 191 × 64.
#pragma once

#include <algorithm>
#include <cstdint>

namespace swarmt::ops::detail {

// Query block `index`: queries [q_start, q_start + q_len) (key indices shifted by `past`) and their key
// band [k_start, k_start + k_len): at most block + window − 1 keys (window 0: every earlier key).
struct BandBlock {
  int64_t q_start;
  int64_t q_len;
  int64_t k_start;
  int64_t k_len;
};

inline BandBlock band_block(int64_t index, int64_t block_size, int64_t n_queries, int64_t past, int64_t window) {
  BandBlock b;
  b.q_start = index * block_size;
  b.q_len = std::min(block_size, n_queries - b.q_start);
  const int64_t first_pos = b.q_start + past;  // key index of the block's first query
  b.k_start = window > 0 ? std::max<int64_t>(0, first_pos - window + 1) : 0;
  b.k_len = first_pos + b.q_len - b.k_start;
  return b;
}

// One attention problem in the grouped layout of attention_blocked.h, T = float or double.
template <typename T>
struct BandProblem {
  int64_t rep = 1;         // query heads per kv head: grouped row n·rep + r is position n
  int64_t n_queries = 0;   // Nq (positions)
  int64_t past = 0;        // Nk − Nq
  int64_t window = 0;      // 0: full causal
  int64_t block_size = 64;
  int64_t head_dim = 0;
  double scale = 1.0;
  double softcap = 0.0;
  const T* q = nullptr;    // (heads, Nq·rep, D) contiguous
  const T* k = nullptr;    // head h, key j at k + h·kv_head_stride + j·kv_row_stride (unit-stride rows)
  const T* v = nullptr;
  int64_t kv_head_stride = 0;
  int64_t kv_row_stride = 0;
  const int64_t* docs = nullptr;  // (heads, Nk) document of every key, or null
  int64_t n_keys = 0;

  int64_t num_blocks() const { return (n_queries + block_size - 1) / block_size; }
  BandBlock block(int64_t index) const { return band_block(index, block_size, n_queries, past, window); }
};

// out (heads, Nq·rep, D) and lse (heads, Nq·rep) for heads [head_begin, head_end) and query blocks
// [block_begin, block_end).
template <typename T>
void band_forward_cpu(const BandProblem<T>& p, T* out, T* lse, int64_t head_begin, int64_t head_end,
                      int64_t block_begin, int64_t block_end);

// Gradients for heads [head_begin, head_end), every block: dq (heads, Nq·rep, D); dk, dv (heads, Nk, D)
// contiguous, fully written (keys no query sees get 0).
template <typename T>
void band_backward_cpu(const BandProblem<T>& p, const T* out, const T* lse, const T* grad_out, T* dq, T* dk, T* dv,
                       int64_t head_begin, int64_t head_end);

// Whether CPU attention takes these kernels (default) or the batched ops (tests compare the two).
void set_attention_band_kernels(bool on);
bool attention_band_kernels();

}  // namespace swarmt::ops::detail
