// ARMT model directories.
//
// Adapter (what `swarmt armt init` and `swarmt armt train` write by default):
//   armt_config.json    the ARMT config + "model_type": "armt", "base_model": path of the base model
//                       directory relative to the adapter directory (or absolute), and the base's
//                       model_type / hidden_size / num_hidden_layers, checked when loading
//   armt.safetensors    the adapter tensors ("armt.memory_tokens", "armt.layers.<l>.*"); a training
//                       checkpoint of a run with a frozen base holds them as model.safetensors, which
//                       the loader reads when armt.safetensors is absent
//   tokenizer.json, tokenizer_config.json   copied from the base model, so the adapter directory is
//                       used like any model directory (generate, eval, forward)
// Merged: an ordinary model directory whose config.json has "model_type": "armt" and the base's config
// under "base_config", and whose model.safetensors holds the base tensors (their own names) and the
// adapter tensors.
#pragma once

#include <memory>
#include <string>

#include "swarmt/models/armt_model.h"
#include "swarmt/models/model_io.h"

namespace swarmt::models {

constexpr const char* kArmtConfigFile = "armt_config.json";
constexpr const char* kArmtWeightsFile = "armt.safetensors";

// A directory with armt_config.json and no config.json.
bool is_armt_adapter_dir(const std::string& dir);

// Wraps the base model of `base_dir` (loaded with `options`) with a fresh, untrained ARMT adapter.
std::shared_ptr<ArmtModel> create_armt(const std::string& base_dir, const ArmtConfig& config,
                                       const LoadOptions& options = {});

// Loads an adapter directory: the base model it references, then the adapter tensors.
std::shared_ptr<ArmtModel> load_armt_adapter(const std::string& dir, const LoadOptions& options = {});

// The base model directory an adapter references (resolved against the adapter directory).
std::string armt_base_dir(const std::string& adapter_dir);

// Writes an adapter directory referencing `base_dir`: tensors first, config last (each atomically).
void save_armt_adapter(const ArmtModel& model, const std::string& dir, const std::string& base_dir,
                       const ModelAssets& assets);

// The files of an adapter directory `dir` besides its tensors: the tokenizer assets, then armt_config.json
// with `base_dir` referenced relative to `dir` (unless absolute), in the order to write them.
NamedFiles armt_adapter_description_files(const ArmtModel& model, const std::string& dir,
                                          const std::string& base_dir, const ModelAssets& assets);

}  // namespace swarmt::models
