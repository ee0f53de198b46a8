// Weights holding NaN or ±Inf: found when a model is loaded, not when it prints NUL bytes.
//
// A model whose embedding is NaN used to load everywhere: `generate` printed NUL bytes and exited 0,
// `forward` wrote NaN logits, `armt init` wrapped it. Loading now scans every floating-point tensor
// (at::isfinite, in slices, so the scan needs no second copy of a large tensor) and refuses broken weights
// naming the file and the tensor; commands that must look at such a model anyway take --allow-nonfinite,
// and `swarmt info` reports them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "swarmt/core/safetensors_torch.h"

namespace swarmt {

struct NonFiniteTensor {
  std::string name;
  std::string file;       // the .safetensors file holding it
  int64_t bad_values = 0; // NaN or ±Inf elements
  int64_t numel = 0;
};

// Every floating-point tensor of `store` holding a NaN or an infinity, in name order (a full scan).
std::vector<NonFiniteTensor> find_nonfinite_tensors(const TensorStore& store);

// BadInput for the first such tensor: "<file>: tensor 'model.embed_tokens.weight' holds 24 NaN or
// infinite values (of 8288); the weights are broken (pass --allow-nonfinite to load them anyway)".
void check_weights_finite(const TensorStore& store);

}  // namespace swarmt
