// Internal to ops/attention*: the blocked (flash-style) forward and backward kernels behind
// causal_attention and attend_with_cache. Callers outside ops use attention.h.
//
// Layout. Query heads that share a kv head are grouped so that grouped-query attention needs no repeated
// K/V: q (B, Hq, N, D) is viewed as (B·Hkv, N·rep, D) with row n·rep + r holding query head
// kv_head·rep + r at position n (rep = Hq / Hkv). One batched matmul of a block of those rows against the
// (B·Hkv, keys, D) keys then serves every query head of the group.
//
// Blocks. Query block [qs, qs + b) (key indices qs + past ... qs + past + b - 1) reaches keys
// [max(0, qs + past - window + 1), qs + past + b): at most b + window - 1 of them (window 0: all earlier
// keys). Scratch per block is (heads, b·rep, keys of the band), reused from block to block, so fwd + bwd
// memory is O(N·D + block·(block + window)) per head and never N×N.
//
// Threads (CPU). The B·Hkv rows are independent: each worker takes a range of them and runs all blocks
// with single-threaded ops, so a call costs one fork/join rather than one per small op (on 2 shared
// cores the per-op barriers cost more than the arithmetic). The forward splits query blocks instead when
// there are fewer rows than threads. On CPU each block runs on raw buffers (attention_band_cpu.h); the
// batched tensor ops below serve accelerators.
#pragma once

#include <ATen/ATen.h>

#include "swarmt/ops/attention.h"

namespace swarmt::ops::detail {

// Throws BadInput naming the problem if q, k, v, doc_ids or options do not fit the contract of attention.h.
void check_attention_inputs(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                            const AttentionOptions& options, const at::Tensor& doc_ids);

// fp64 for fp64 inputs, fp32 otherwise. Matmuls and softmax statistics run in this type (bf16 inputs are
// upcast: on CPU fp32 GEMM is faster than bf16 here, and the scores keep fp32 precision).
at::ScalarType attention_compute_type(at::ScalarType input);

// 1/sqrt(D) unless options.scale is set.
double attention_scale(const AttentionOptions& options, int64_t head_dim);

struct BlockedForwardResult {
  at::Tensor out;  // (B, Hq, Nq, D) in q's dtype
  at::Tensor lse;  // (B·Hkv, Nq·rep) grouped layout, compute type: log Σ_j exp(s_ij) per query row
};

// Forward of causal_attention (inputs already checked). No autograd.
BlockedForwardResult blocked_attention_forward(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                               const at::Tensor& doc_ids, const AttentionOptions& options);

struct BlockedGradients {
  at::Tensor dq;  // (B, Hq, Nq, D) in q's dtype
  at::Tensor dk;  // (B, Hkv, Nk, D) in k's dtype
  at::Tensor dv;  // (B, Hkv, Nk, D) in v's dtype
};

// Backward from the saved output and log-sum-exp: recomputes P block by block,
//   dP = dO Vᵀ, dS = P ⊙ (dP − rowsum(dO ⊙ O)), dQ = dS K·scale, dK = dSᵀ Q·scale, dV = Pᵀ dO
// (with soft-capping, dS is further multiplied by 1 − tanh²(s/c)). No autograd.
BlockedGradients blocked_attention_backward(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                            const at::Tensor& doc_ids, const at::Tensor& out,
                                            const at::Tensor& lse, const at::Tensor& grad_out,
                                            const AttentionOptions& options);

}  // namespace swarmt::ops::detail
