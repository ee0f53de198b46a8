// Model directories in Hugging Face layout: config.json + model.safetensors (or shards + index) +
// tokenizer.json (+ tokenizer_config.json). Loading validates every tensor's name and shape against the
// architecture; saving writes each file atomically, so an interrupted save never leaves a directory that
// loads with half-written weights.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "swarmt/models/causal_lm.h"

namespace swarmt::models {

struct LoadOptions {
  at::Device device = at::kCPU;
  // Weights dtype after loading; nullopt keeps the config's dtype (SWAX: torch_dtype, HF models: their
  // stored dtype).
  std::optional<at::ScalarType> dtype;
  // Load weights holding NaN or ±Inf instead of refusing them (core/nonfinite.h): for looking at a broken
  // model, never for using one unknowingly.
  bool allow_nonfinite = false;
};

// Texts copied next to the weights (empty: not written).
struct ModelAssets {
  std::string tokenizer_json;
  std::string tokenizer_config_json;
};

std::shared_ptr<CausalLM> load_model(const std::string& dir, const LoadOptions& options = {});

// Writes config.json, the weights and the assets into `dir` (created if needed).
void save_model(CausalLM& model, const std::string& dir, const ModelAssets& assets = {});

// The small files that, beside the weights in model.safetensors, make a directory one load_model reads:
// the tokenizer assets, then config.json (with "torch_dtype"), in the order to write them (config last,
// so a directory with a new config.json always has the files it names). save_model writes them, and so
// does every training checkpoint, which is therefore a model directory too.
using NamedFiles = std::vector<std::pair<std::string, std::string>>;  // (file name, contents)
NamedFiles model_description_files(const CausalLM& model, const ModelAssets& assets);
// tokenizer.json and tokenizer_config.json, those of `assets` that are present.
NamedFiles asset_files(const ModelAssets& assets);

// Reads the assets of a model directory (tokenizer.json, tokenizer_config.json when present).
ModelAssets read_model_assets(const std::string& dir);

// "float32" / "bfloat16" / "float16" / "float64" <-> ScalarType; BadInput naming `field` otherwise.
at::ScalarType dtype_from_name(const std::string& name, const std::string& field);
std::string dtype_name(at::ScalarType type);

}  // namespace swarmt::models
