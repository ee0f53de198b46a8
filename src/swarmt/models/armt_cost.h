// FLOPs of a forward pass over N tokens, counted per layer from the shapes (matrix products only: 2
// FLOPs per multiply-add; norms, activations and softmax are lower order), for a Llama-architecture
// decoder (Llama, SmolLM2, Gemma-3 counted with global attention in every layer) with full causal
// attention over all N tokens, and for ARMT over the same decoder (specs/armt.md §5: "30% less FLOPs").
//
// Per layer, for n tokens attending to `pairs` (query, key) pairs in total:
//   projections  2 n d (H + 2 K) h  +  2 n H h d        (q, k, v; o)
//   attention    4 H h · pairs                           (QKᵀ and AV)
//   MLP          6 n d f                                 (gate, up, down)
// Full attention over N: pairs = N (N + 1) / 2. ARMT: each segment runs T real + M memory tokens with
// pairs = (T + M)(T + M + 1) / 2 (the last segment has no memory tokens), and every memory layer adds
//   read   2 n d d_mem + 2 n Dk d / H_m + 2 n Dk               (W_q; Aᵀφ(q); zᵀφ(q)), from segment 2 on
//          + 2 n d H_m + n d with read_gate                     (the gate's projection; gate · read)
//   write  2 M d (d_mem + d + H_m) + 4 M Dk d / H_m + 2 M Dk    (W_k, W_v, W_β; v̄ and A update; z)
// with Dk = 2·nu·d_mem over H_m memory heads (each head: Dk/H_m × d/H_m). The LM head (2 N d V) is counted for the N real tokens in both.
#pragma once

#include <cstdint>

#include "swarmt/core/json.h"
#include "swarmt/models/armt_config.h"

namespace swarmt::models {

struct DecoderShape {
  int64_t layers = 0, hidden = 0, heads = 0, kv_heads = 0, head_dim = 0, intermediate = 0, vocab = 0;
  // From a Llama / Gemma-3 config.json; BadInput naming `source` for other model types.
  static DecoderShape from_config(const Json& config, const std::string& source);
};

double decoder_layer_flops(const DecoderShape& s, double tokens, double attended_pairs);
double full_attention_forward_flops(const DecoderShape& s, int64_t tokens);
double armt_forward_flops(const DecoderShape& s, const ArmtConfig& armt, int64_t memory_layers, int64_t tokens);

}  // namespace swarmt::models
