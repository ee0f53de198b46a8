// A streaming state saved to a file and resumed from it: a conversation that has read a long document is
// written once and continued later without reading the document again. For SWAX and ARMT models the
// file's size does not depend on how many tokens the state has read.
//
// Format: one safetensors file. Tensors under their state names ("layers.3.C", "layers.0.k", ...; see
// nn::LayerState::fields), integers in the metadata as "int:<name>" = a signed decimal of fixed width
// ("+0000000000000000042": a file's size never depends on them), and
//   "format"  "swarmt-state"          "version" "1"
//   "model"   the model's fingerprint (model_state_fingerprint)
//   "sha256"  SHA-256 over every other metadata entry (sorted "key=value\n" lines) and every tensor's
//             name, dtype, shape and bytes in name order
// Callers may add their own entries under "user.<key>" (covered by the checksum).
//
// Written atomically (core/atomic_file.h): a reader sees the old file or the new one, never half of one.
// Loading checks, in order: the safetensors header, the format, the checksum (one changed byte is
// refused), the model fingerprint, and every field against a fresh state of the model (names, dtypes,
// shapes, then each state's own consistency checks). Errors are BadInput naming the file.
#pragma once

#include <map>
#include <string>

#include "swarmt/core/sha256.h"
#include "swarmt/models/causal_lm.h"

namespace swarmt::models {

// SHA-256 of what decides a state's layout and meaning: config.json as the model writes it, its dtype
// and its inference window. Two checkpoints of one configuration share a fingerprint (their weights
// are not hashed: that would read the whole model on every load).
std::string model_state_fingerprint(CausalLM& model);

FileDigest save_model_state(ModelState& state, CausalLM& model, const std::string& path,
                            const std::map<std::string, std::string>& user_metadata = {});

struct LoadedModelState {
  ModelState state;
  std::map<std::string, std::string> user_metadata;  // the "user.<key>" entries, without the prefix
};

LoadedModelState load_model_state(CausalLM& model, const std::string& path);

}  // namespace swarmt::models
