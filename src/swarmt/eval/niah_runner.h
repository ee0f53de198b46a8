// The RULER needle-in-a-haystack evaluation of a model: for every (variant, length[, depth]) it generates
// samples fitted to the length with the model's tokenizer, prefills them in chunks through the streaming
// state, decodes greedily a bounded number of tokens, and scores as RULER does. Peak RSS is measured per
// length (the constant-memory check for SWAX / ARMT models).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "swarmt/eval/report.h"
#include "swarmt/infer/loaded_model.h"

namespace swarmt::eval {

struct NiahRunOptions {
  std::vector<std::string> variants{"niah_single_1"};
  std::vector<int64_t> lengths{4096};
  int64_t samples = 10;              // per (variant, length, depth)
  std::vector<double> depths;        // empty: RULER's random placement
  uint64_t seed = 42;
  int64_t max_new_tokens = 0;        // 0: the expected answer's tokens + 8; > 0 also sets the room kept free
  std::string essay_dir;             // "" : the built-in essay text
  bool quiet = false;
};

// Resource use per length, reported in results.json metadata and the closing tables.
struct LengthResources {
  int64_t length = 0;
  int64_t peak_rss_bytes = 0;       // peak resident set size while evaluating this length
  int64_t state_bytes = 0;          // streaming state after a sample
  double seconds_per_sample = 0;
  double prefill_tokens_per_s = 0;
};

EvalRun run_niah(const infer::LoadedModel& model, const NiahRunOptions& options,
                 std::vector<LengthResources>* resources = nullptr);

Json resources_to_json(const std::vector<LengthResources>& resources);

}  // namespace swarmt::eval
