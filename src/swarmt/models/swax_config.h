// Configuration of a SWAX hybrid model (config.json with "model_type": "swax"): every hyper-parameter
// explicit, so a model directory fully describes its architecture.
//
// The architecture is a stack of blocks named by a layer pattern (specs/swax.md §1.4), one letter of the
// mixer table (models/swax_mixers.h) per block:
//   S = sliding-window attention, A = full attention, M = mLSTM, G = Gated DeltaNet.
// SWAX proper is "MS" repeated (mLSTM first in each pair, §1.3); baselines are "S…S" (pure SWA),
// "M…M" (pure mLSTM), "A…A" (Transformer), "GS…" (the Gated DeltaNet variant).
// On input, `layer_pattern` may be a short unit repeated to `num_hidden_layers`; on output it is always
// the expanded pattern, one letter per block.
#pragma once

#include <cstdint>
#include <string>

#include "swarmt/core/json.h"

namespace swarmt::models {

struct SwaxConfig {
  int64_t vocab_size = 259;           // byte tokenizer: 256 bytes + <pad> <bos> <eos>
  int64_t hidden_size = 256;
  std::string layer_pattern = "MSMSMSMS";
  int64_t intermediate_size = 0;      // 0: round_up(8/3 · hidden_size, 64) (xLSTM-7B's 2.6667)
  double rms_norm_eps = 1e-6;
  double logit_soft_cap = 30.0;       // 0: off (xLSTM-7B caps logits at 30)
  bool tie_word_embeddings = false;

  // Attention blocks (S, A).
  int64_t num_attention_heads = 4;
  int64_t num_key_value_heads = 4;
  int64_t head_dim = 64;
  double rope_theta = 10000.0;
  int64_t sliding_window = 256;       // S blocks at inference; training may override it per step

  // mLSTM blocks (M).
  int64_t mlstm_num_heads = 2;
  int64_t mlstm_qk_head_dim = 64;     // default 0.5·d / heads
  int64_t mlstm_v_head_dim = 128;     // default d / heads
  double mlstm_gate_soft_cap = 15.0;
  int64_t mlstm_chunk_size = 64;
  double mlstm_eps = 1e-6;
  double mlstm_norm_eps = 1e-6;
  int64_t mlstm_conv_size = 0;        // > 0: xLSTM-1's short conv before q and k (mlstm_layer.h)

  // Gated DeltaNet blocks (G).
  int64_t gdn_num_heads = 2;
  int64_t gdn_head_dim = 64;
  int64_t gdn_v_head_dim = 128;       // head_dim · expand_v (fla default expand_v = 2)
  int64_t gdn_conv_size = 4;
  bool gdn_allow_neg_eigval = false;
  int64_t gdn_chunk_size = 64;
  double gdn_norm_eps = 1e-5;

  int64_t bos_token_id = 257;
  int64_t eos_token_id = 258;
  int64_t pad_token_id = 256;
  std::string torch_dtype = "float32";

  int64_t num_hidden_layers() const { return static_cast<int64_t>(layer_pattern.size()); }
  int64_t resolved_intermediate_size() const;

  // Parses and validates; errors name `source` and the field. Defaults apply to absent fields, except
  // that per-head mLSTM dims default from hidden_size and mlstm_num_heads.
  static SwaxConfig from_json(const Json& json, const std::string& source);
  Json to_json() const;
};

}  // namespace swarmt::models
