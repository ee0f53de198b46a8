// Training batches and the data sources that produce them.
//
// A source is a pure function of (sample index): sample i of a given source is always the same
// tokens. Trainers ask for samples by global index (step, micro-step, rank, row), which makes runs
// reproducible, resumable at any step without saved reader state, and shardable across ranks.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace swarmt::data {

constexpr int64_t kIgnoreIndex = -100;

struct Sample {
  std::vector<int64_t> tokens;   // model input, length N
  std::vector<int64_t> targets;  // next-token targets, length N, kIgnoreIndex where no loss is taken
  std::vector<int64_t> doc_ids;  // optional, length N: document index of each input token
};

struct Batch {
  at::Tensor tokens;   // int64 (B, N)
  at::Tensor targets;  // int64 (B, N), kIgnoreIndex = ignored
  at::Tensor doc_ids;  // int64 (B, N) or undefined
  int64_t num_target_tokens() const;
};

class DataSource {
 public:
  virtual ~DataSource() = default;
  virtual Sample sample(int64_t index) const = 0;
  virtual int64_t sequence_length() const = 0;
  virtual std::string describe() const = 0;
};

// Stacks samples [first, first + count) of a source into a batch (all samples of a batch must have the
// same length).
Batch make_batch(const DataSource& source, int64_t first, int64_t count);

}  // namespace swarmt::data
