// FLOP formulas for softmax attention, shared by the kernel benchmarks, `swarmt bench` and the model FLOP
// accounting. Attention only; the recurrent layers keep their formulas in their own file.
//
// Convention: only the matrix products are counted, a multiply-add is 2 FLOPs, and only the (query, key)
// pairs the mask lets through are "needed" (masked-out work done by a blocked kernel is its own overhead,
// not useful work). Softmax, masking and soft-capping are elementwise and not counted.
//
// Per visible pair and head, with head dimension D:
//   forward   s = q·k (2D) and o += p·v (2D)                                  -> 4·D
//   backward  dP = dO·v (2D), dQ += dS·k (2D), dK += dS·q (2D), dV += p·dO (2D) -> 8·D
//             (a kernel that recomputes P from the log-sum-exp also redoes q·k: +2·D, not "needed")
// For N queries over their own N keys this gives 4·D·(w·N − w(w−1)/2) for a window w <= N (≈ 4·N·w·D)
// and 4·D·N(N+1)/2 ≈ 2·N²·D for full causal attention.
#pragma once

#include <cstdint>

namespace swarmt::ops {

// Number of (query, key) pairs with 0 <= pos_q - pos_k < window (window 0: unbounded), for n_queries
// queries that continue after n_keys - n_queries earlier keys (as in causal_attention). Exact.
int64_t attention_visible_pairs(int64_t n_queries, int64_t n_keys, int64_t window);

// Needed forward FLOPs of causal (window 0) or sliding-window attention over `batch` sequences and
// `query_heads` heads: 4 · head_dim · visible pairs per head.
double attention_forward_flops(int64_t batch, int64_t query_heads, int64_t n_queries, int64_t n_keys,
                               int64_t head_dim, int64_t window);

// Needed backward FLOPs (gradients of q, k and v): twice the forward.
double attention_backward_flops(int64_t batch, int64_t query_heads, int64_t n_queries, int64_t n_keys,
                                int64_t head_dim, int64_t window);

}  // namespace swarmt::ops
