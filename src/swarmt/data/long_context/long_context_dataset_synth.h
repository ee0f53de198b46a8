// `swarmt data synth`: writing a synthetic long-context dataset (long_qa, type_prediction,
// facts_in_noise) as JSONL, deterministic from a seed.
//
// Example k of bucket b is generated from seed' = mix(mix(seed, hash(b.name)), k), its target length
// drawn uniformly in the bucket's range from the same seed', so any example can be regenerated alone, and
// adding a bucket or more samples never changes the examples already there. The file is written
// atomically (a killed run leaves no partial file).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "swarmt/data/long_context/long_context_dataset.h"
#include "swarmt/data/synthetic/type_prediction_projects.h"

namespace swarmt::data {

struct SynthOptions {
  std::string task;                  // long_qa | type_prediction | facts_in_noise
  std::vector<LengthBucket> buckets;
  int64_t samples_per_bucket = 100;
  uint64_t seed = 0;
  std::string corpus;                // long_qa / facts_in_noise: directory of .txt files; type_prediction:
                                     // directory of Python projects; "" = built-in
  std::vector<double> depths;        // percent, cycled over each bucket's examples; empty = random
  std::string variant = "mixed";     // facts_in_noise: qa1 | qa2 | mixed
  int64_t distractors = 4;           // long_qa
  std::vector<std::string> templates;  // long_qa: template names (empty: all)
  int64_t rewrites = 0;              // long_qa: overridden earlier values of the asked fact
  int64_t synthetic_projects = 48;   // type_prediction without a corpus: generated projects
};

const std::vector<std::string>& long_context_task_names();

// The generator for options.task; BadInput listing the task names for an unknown one.
std::unique_ptr<LongContextTask> make_long_context_task(const SynthOptions& options, const QaLengthCounter& counter);

// The Python projects type_prediction uses: load_python_projects(corpus), or without a corpus
// `synthetic_projects` generated ones (from the seed).
std::vector<PythonProject> type_prediction_projects(const SynthOptions& options);

// The requests of the whole dataset, bucket by bucket.
std::vector<ExampleRequest> synth_requests(const SynthOptions& options);

struct SynthBucketStats {
  std::string name;
  int64_t examples = 0;
  int64_t min_length = 0, max_length = 0;
  double mean_length = 0;
  double mean_shortfall = 0;  // mean of (target - length_tokens)
};

struct SynthSummary {
  int64_t examples = 0;
  std::vector<SynthBucketStats> buckets;
  double seconds = 0;
};

// Generates every example and writes them to `out_path` (one JSON object per line). `progress`
// (optional) is called after each example with (done, total).
SynthSummary write_long_context_dataset(const SynthOptions& options, const LongContextTask& task,
                                        const std::string& out_path,
                                        const std::function<void(int64_t, int64_t)>& progress = {});

}  // namespace swarmt::data
