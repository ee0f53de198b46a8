// Causal softmax attention, full or sliding-window, with grouped-query heads; O(N·w) time and memory.
//
// Semantics (specs/swax.md §4): query i attends key j iff 0 <= pos(i) - pos(j) < window (w keys, itself
// included); window 0 means full causal attention. Queries may continue after `past` cached keys: with
// Nk keys and Nq queries, query i sits at key index i + (Nk - Nq). So one kernel serves training
// (Nk == Nq), chunked prefill over a cache, and decode (Nq == 1).
//
// The kernel is blocked (flash-style): queries are processed in blocks, each against only the keys its
// band can reach, with an online softmax; the backward recomputes probabilities from the saved
// log-sum-exp. No N×N matrix is ever materialised, for any window, full attention included.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>

namespace swarmt::ops {

struct AttentionOptions {
  int64_t window = 0;        // 0: full causal; otherwise keys with 0 <= pos_q - pos_k < window
  double scale = 0.0;        // 0: 1/sqrt(D)
  double softcap = 0.0;      // > 0: scores become softcap * tanh(scores / softcap) (Gemma-2 style)
  int64_t block_size = 64;   // query block of the blocked kernel (performance knob only)
};

// q: (B, Hq, Nq, D); k, v: (B, Hkv, Nk, D) with Hq % Hkv == 0 and Nk >= Nq (GQA: query head h uses kv
// head h / (Hq / Hkv)). doc_ids: undefined, or int64 (B, Nk) document index of every key position (the
// last Nq entries are the queries'); a query never attends to a key of another document. Returns
// (B, Hq, Nq, D). Differentiable wrt q, k, v with a custom O(N·w)-memory backward.
at::Tensor causal_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                            const AttentionOptions& options, const at::Tensor& doc_ids = {});

// Plain reference that materialises the (Nq, Nk) mask and probabilities. Tests only.
at::Tensor causal_attention_reference(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                      const AttentionOptions& options, const at::Tensor& doc_ids = {});

// Per-layer key/value cache for streaming: a ring of `capacity` slots for sliding-window layers (memory
// independent of the context length), or an unbounded, growing cache for full-attention layers
// (capacity 0). Keys are stored after RoPE, so nothing is re-rotated when the ring wraps.
struct KVCache {
  at::Tensor k;          // (B, Hkv, slots, D)
  at::Tensor v;          // (B, Hkv, slots, D)
  at::Tensor positions;  // int64 (slots): absolute position held by each slot, -1 if empty
  int64_t capacity = 0;  // ring size; 0 = grow without bound
  int64_t seen = 0;      // tokens appended so far (the next token's absolute position)
  int64_t bytes() const;
  // A ring stays at bytes(); a growing cache holds the slots it grows to when `more_tokens` arrive at once
  // (arriving in pieces, its doubling can reach up to twice that).
  int64_t bytes_after(int64_t more_tokens) const;
};

KVCache make_kv_cache(int64_t batch, int64_t kv_heads, int64_t head_dim, int64_t capacity,
                      at::ScalarType dtype, at::Device device);

// Attends n new queries (absolute positions cache.seen .. cache.seen + n - 1) to the cached keys plus
// the n new ones, then stores the new keys/values (only the last `capacity` of them for a ring).
// q: (B, Hq, n, D); k_new, v_new: (B, Hkv, n, D), keys already rotated. Works for any n (decode n == 1,
// chunked prefill n > 1, n larger than the window). Not differentiable (inference).
at::Tensor attend_with_cache(KVCache& cache, const at::Tensor& q, const at::Tensor& k_new, const at::Tensor& v_new,
                             const AttentionOptions& options);

// attend_with_cache for one token of one sequence on raw buffers (the decode step), for a CPU cache of
// dtype T (float or bf16) with batch 1: stores k_new and v_new (Hkv rows of D) at position cache.seen,
// then attends q (q_heads rows of D, rotated) as attend_with_cache does, writing q_heads rows of D to
// `out` in fp32 (unrounded). False, with nothing changed, when the cache is not of that kind or the
// window does not fit it (attend_with_cache then says why).
template <typename T>
bool attend_token_with_cache(KVCache& cache, const T* q, int64_t q_heads, const T* k_new, const T* v_new,
                             const AttentionOptions& options, float* out);

}  // namespace swarmt::ops
