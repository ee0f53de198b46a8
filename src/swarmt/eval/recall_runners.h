// Passkey retrieval and MQAR (multi-query associative recall) evaluations of a model, reported through
// the same EvalRun / report machinery as RULER NIAH.
#pragma once

#include <cstdint>
#include <vector>

#include "swarmt/eval/niah_runner.h"
#include "swarmt/eval/report.h"
#include "swarmt/infer/loaded_model.h"

namespace swarmt::eval {

struct PasskeyRunOptions {
  std::vector<int64_t> lengths{4096};
  int64_t samples = 10;           // per (length, depth)
  std::vector<double> depths;     // empty: uniformly random depth per sample
  uint64_t seed = 42;
  bool quiet = false;
};

// Score per sample: 100 if the generated text contains the key.
EvalRun run_passkey(const infer::LoadedModel& model, const PasskeyRunOptions& options,
                    std::vector<LengthResources>* resources = nullptr);

struct MqarRunOptions {
  std::vector<int64_t> lengths{256};         // sequence lengths
  std::vector<int64_t> num_kv_pairs{8};
  int64_t samples = 20;                      // per (length, pairs)
  int64_t vocab_begin = 0;                   // ids used: [vocab_begin, vocab_end)
  int64_t vocab_end = 256;
  int64_t chunk = 2048;                      // streaming chunk for long sequences
  uint64_t seed = 42;
  bool quiet = false;
};

// Score per sample: percentage of query positions whose argmax is the key's value. Variant names are
// "mqar_kv<pairs>".
EvalRun run_mqar(const infer::LoadedModel& model, const MqarRunOptions& options);

}  // namespace swarmt::eval
