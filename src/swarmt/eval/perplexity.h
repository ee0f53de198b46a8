// Loss by position: how well a model predicts token t of a long sequence as a function of t. Windows of
// `length` tokens are cut from a token file and streamed through the model in chunks; the per-token loss
// is averaged into position buckets (powers of two by default). A model that uses long context has a loss
// that keeps falling with position; one that forgets plateaus at its window.
#pragma once

#include <string>
#include <vector>

#include "swarmt/core/json.h"
#include "swarmt/infer/loaded_model.h"

namespace swarmt::eval {

struct PerplexityOptions {
  std::string token_file;
  int64_t length = 4096;     // tokens per window
  int64_t windows = 8;       // windows evaluated (from a seed)
  int64_t chunk = 1024;      // streaming chunk
  int64_t bucket_size = 0;   // 0: power-of-two buckets [0,1) [1,2) [2,4) ... else fixed size
  uint64_t seed = 42;
  bool quiet = false;
};

struct PositionBucket {
  int64_t begin = 0, end = 0;  // positions [begin, end)
  double mean_loss = 0;        // nats per token
  int64_t tokens = 0;
};

struct PerplexityResult {
  std::vector<PositionBucket> buckets;
  double mean_loss = 0;
  int64_t tokens = 0;
  Json to_json() const;
};

PerplexityResult run_perplexity(const infer::LoadedModel& model, const PerplexityOptions& options);

// results.json, summary.md (table of buckets) and loss_by_position.svg into `dir`.
void write_perplexity_report(const std::string& dir, const PerplexityResult& result, const Json& metadata);

}  // namespace swarmt::eval
