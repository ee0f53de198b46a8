// Synthetic training streams, generated on the fly from a seed (no files): a weighted mix of
//   niah     RULER needle-in-a-haystack prompts (any of the 8 variants; `noise` by default) + the answer
//   passkey  the classic pass-key retrieval prompt + the key
//   mqar     multi-query associative recall (Zoology), directly in token ids
//   recall   distance-controlled associative recall (distance_recall.h), loss only at the asked keys;
//            its number of pairs may follow a curriculum over training
//   essay    language modelling on the built-in essay text
// Each sample is exactly sequence_length tokens: the prompt is fitted to the length with the model's
// tokenizer (so recall distance grows with the training length), the answer follows, and the rest is
// padding with ignored targets. Loss on all tokens or on answer tokens only.
//
// Config (the "train" / "validation" object of a training config):
//   {"type": "synthetic", "seed": 1, "loss": "all" | "answer",
//    "tasks": [{"task": "niah", "weight": 1, "variant": "niah_single_1", "lengths": [1024]},
//              {"task": "passkey", "weight": 1, "lengths": [512, 1024]},
//              {"task": "mqar", "weight": 1, "num_kv_pairs": 16, "vocab_begin": 0, "vocab_end": 256},
//              {"task": "recall", "weight": 1, "pairs": [[0, 2], [0.15, 4], [0.3, 8]],
//               "distances": [[0.9, 10, 60], [0.1, 65, 200]]},
//              {"task": "essay", "weight": 1}]}
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "swarmt/core/json.h"
#include "swarmt/data/batch.h"
#include "swarmt/tokenizer/tokenizer.h"

namespace swarmt::data {

struct SyntheticSpecialIds {
  int64_t bos = -1;  // prepended to every sample when >= 0
  int64_t eos = -1;  // appended after the answer when >= 0
  int64_t pad = 0;
};

class SyntheticSource : public DataSource {
 public:
  // planned_samples: samples the training run will draw (steps x batch size), so that curricula can
  // follow the progress of training ((sample index - first_planned_sample) / planned_samples); 0: unknown
  // (validation data), curricula then use their last stage. first_planned_sample: the index of the first
  // of them (a phase of a longer run draws indices that start where the earlier phases stopped).
  SyntheticSource(const JsonView& config, tokenizer::Tokenizer tokenizer, SyntheticSpecialIds ids,
                  int64_t sequence_length, uint64_t default_seed, int64_t planned_samples = 0,
                  int64_t first_planned_sample = 0);
  ~SyntheticSource() override;

  Sample sample(int64_t index) const override;
  int64_t sequence_length() const override { return sequence_length_; }
  std::string describe() const override;

  struct Task;

 private:
  std::vector<std::unique_ptr<Task>> tasks_;
  std::vector<double> cumulative_weights_;
  tokenizer::Tokenizer tokenizer_;
  SyntheticSpecialIds ids_;
  int64_t sequence_length_;
  uint64_t seed_;
  int64_t planned_samples_ = 0, first_planned_sample_ = 0;
  bool answer_only_loss_ = false;
};

}  // namespace swarmt::data
