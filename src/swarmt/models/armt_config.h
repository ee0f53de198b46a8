// Configuration of an ARMT wrapper (specs/armt.md): the associative memory added to a decoder model.
//
// Stored as armt_config.json next to armt.safetensors in an adapter directory, or inside config.json
// ("model_type": "armt", with the base model's config under "base_config") in a merged model directory.
//
//   {"segment_size": 1024, "num_memory_tokens": 16, "d_mem": 64, "memory_layers": "all",
//    "num_heads": 1, "dpfp_nu": 3, "gamma_correction": true, "use_denom": true, "normalize_features": true,
//    "eps": 1e-5, "bptt_depth": 0, "checkpoint_segments": false, "memory_init_std": 0, "memory_tokens_read": true,
//    "read_gate": false, "separate_write_pass": false, "feature_map": "dpfp", "seed": 0}
//
// memory_layers: "all", "alternate" (0, 2, 4, ...: the reference code's --alternate_layers),
// "middle_upper:<fraction>" (round(fraction·L) consecutive layers, at least 1, centred in the upper
// half of the stack: the 2026 paper reports memory helps mostly in middle and upper layers; the exact
// selection is not published, this is our choice), or an explicit list of layer indices [3, 5, 7].
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "swarmt/core/json.h"

namespace swarmt::models {

struct ArmtConfig {
  int64_t segment_size = 1024;     // real tokens per segment
  int64_t num_memory_tokens = 16;  // M learned tokens appended to every segment (write-only)
  int64_t d_mem = 64;              // query/key projection width; key features are 2·nu·d_mem wide
  Json memory_layers = "all";      // preset string or list of indices (see above)
  int64_t num_heads = 1;           // memory heads (split d_mem and hidden_size jointly)
  int64_t dpfp_nu = 3;
  bool gamma_correction = true;    // γ = 1 - zᵀk/||k||² (detached); false: γ = 1 (the paper's ablation)
  bool use_denom = true;           // false: the plain delta rule, no normaliser z (the reference's use_denom)
  bool normalize_features = true;  // L2-normalise φ(q), φ(k) (the 2025 reference code)
  double eps = 1e-5;
  int64_t bptt_depth = 0;          // > 0: gradients flow through at most this many segments of memory
  bool checkpoint_segments = false;  // recompute each segment in backward (activation memory of one segment)
  double memory_init_std = 0;      // 0: the standard deviation of the base model's embedding outputs
  // true (the papers): the memory tokens read the memory like every other position. false: they skip the
  // read, so what a segment writes is computed from that segment alone; otherwise the retrieved values of
  // earlier segments enter the next write's keys (docs/armt.md, "Memory tokens that do not read").
  bool memory_tokens_read = true;
  // false (the papers): every reading position adds all it retrieves. true: position t scales what it reads
  // from memory head h by g = σ(w_h·x_t + b_h) (a deviation from the papers, docs/armt.md): with L2-normalised
  // features every query has unit norm, so without a gate every position reads at full strength and the
  // segment's filler carries the latest write into the memory tokens' next keys.
  bool read_gate = false;
  // false (the papers): one pass per segment, and the memory tokens attend to the segment's tokens after those
  // have read the memory, so what segment s stored reaches the keys segment s + 1 writes. true: the write is
  // computed by a second pass of the base over the segment and its memory tokens in which nothing reads, so a
  // segment's keys, values and β are a function of that segment alone (a deviation from the papers,
  // docs/armt.md; a second forward over the segment's tokens). Needs memory_tokens_read false.
  bool separate_write_pass = false;
  // "dpfp" (the papers): φ = DPFP-ν, non-negative, so two keys overlap unless their supports are disjoint,
  // and every later write moves what an earlier key reads back (by the overlap, with the plain delta rule).
  // "linear": φ(x) = x, L2-normalised (DeltaNet's keys; a deviation from the papers, docs/armt.md): signed
  // keys of width d_mem can be orthogonal, so a write need not disturb the others. Needs the plain rule
  // (use_denom false: zᵀφ(q) of signed features can vanish) and normalize_features (unit keys keep the
  // delta rule a contraction).
  std::string feature_map = "dpfp";
  uint64_t seed = 0;               // initialisation of the memory parameters

  static ArmtConfig from_json(const Json& json, const std::string& source);
  Json to_json() const;

  // The wrapped layers of a base model with `num_layers` layers, ascending; BadInput naming `source`
  // when an index is out of range or the preset is unknown.
  std::vector<int64_t> resolve_memory_layers(int64_t num_layers, const std::string& source) const;
  bool linear_features() const { return feature_map == "linear"; }
  int64_t key_dim() const { return linear_features() ? d_mem : 2 * dpfp_nu * d_mem; }  // per model, split over heads
};

// The keys ArmtConfig::from_json reads (so callers embedding it in a larger object can reject the rest).
const std::vector<std::string>& armt_config_keys();

}  // namespace swarmt::models
