#include "swarmt/data/long_context/long_context_dataset_synth.h"

#include <algorithm>
#include <chrono>

#include "swarmt/core/atomic_file.h"
#include "swarmt/core/error.h"
#include "swarmt/data/synthetic/facts_in_noise.h"
#include "swarmt/data/synthetic/long_qa.h"
#include "swarmt/data/synthetic/synthetic_tasks_random.h"
#include "swarmt/data/synthetic/type_prediction.h"

namespace swarmt::data {

namespace {

uint64_t name_hash(const std::string& name) {
  uint64_t h = 0xCBF29CE484222325ull;  // FNV-1a
  for (unsigned char c : name) {
    h ^= c;
    h *= 0x100000001B3ull;
  }
  return h;
}

std::shared_ptr<const ProseCorpus> prose_corpus(const std::string& directory) {
  if (directory.empty()) return std::shared_ptr<const ProseCorpus>(&builtin_prose_corpus(), [](const ProseCorpus*) {});
  return std::make_shared<const ProseCorpus>(load_prose_corpus(directory));
}

}  // namespace

const std::vector<std::string>& long_context_task_names() {
  static const std::vector<std::string> kNames = {"long_qa", "type_prediction", "facts_in_noise"};
  return kNames;
}

std::unique_ptr<LongContextTask> make_long_context_task(const SynthOptions& options, const QaLengthCounter& counter) {
  if (options.task == "long_qa") {
    LongQaOptions o;
    o.distractors = options.distractors;
    o.templates = options.templates;
    o.rewrites = options.rewrites;
    return std::make_unique<LongQaTask>(prose_corpus(options.corpus), o, counter);
  }
  if (options.task == "facts_in_noise") {
    FactsInNoiseOptions o;
    o.variant = options.variant;
    return std::make_unique<FactsInNoiseTask>(prose_corpus(options.corpus), o, counter);
  }
  if (options.task == "type_prediction")
    return std::make_unique<TypePredictionTask>(type_prediction_projects(options), counter);
  throw_input_error("'", options.task, "' is not a synthetic long-context task (long_qa, type_prediction, facts_in_noise)");
}

std::vector<PythonProject> type_prediction_projects(const SynthOptions& options) {
  if (!options.corpus.empty()) return load_python_projects(options.corpus);
  SWARMT_CHECK_INPUT(options.synthetic_projects >= 2 && options.synthetic_projects <= 100000,
                     "type_prediction: the number of generated projects must be in [2, 100000] (got ",
                     options.synthetic_projects, ")");
  return synthetic_python_projects(static_cast<size_t>(options.synthetic_projects),
                                   mix_seed(options.seed, name_hash("python projects")));
}

std::vector<ExampleRequest> synth_requests(const SynthOptions& options) {
  SWARMT_CHECK_INPUT(!options.buckets.empty(), "data synth: no length buckets");
  SWARMT_CHECK_INPUT(options.samples_per_bucket > 0 && options.samples_per_bucket <= 10000000,
                     "data synth: --samples must be in [1, 10000000] (got ", options.samples_per_bucket, ")");
  for (double d : options.depths)
    SWARMT_CHECK_INPUT(d >= 0 && d <= 100, "data synth: depths are percentages in [0, 100] (got ", d, ")");
  std::vector<ExampleRequest> requests;
  for (const auto& bucket : options.buckets) {
    const uint64_t bucket_seed = mix_seed(options.seed, name_hash(bucket.name));
    for (int64_t k = 0; k < options.samples_per_bucket; ++k) {
      ExampleRequest r;
      r.id = str_cat(options.task, "/", bucket.name, "/", k);
      r.bucket = bucket.name;
      r.seed = mix_seed(bucket_seed, static_cast<uint64_t>(k));
      TaskRng rng(mix_seed(r.seed, name_hash("length")));
      r.target_tokens = rng.uniform_int(bucket.min_tokens, bucket.max_tokens);
      if (!options.depths.empty()) r.depth = options.depths[static_cast<size_t>(k) % options.depths.size()];
      requests.push_back(std::move(r));
    }
  }
  return requests;
}

SynthSummary write_long_context_dataset(const SynthOptions& options, const LongContextTask& task,
                                        const std::string& out_path,
                                        const std::function<void(int64_t, int64_t)>& progress) {
  const auto start = std::chrono::steady_clock::now();
  const auto requests = synth_requests(options);
  AtomicFileWriter out(out_path);
  SynthSummary summary;
  for (const auto& bucket : options.buckets) {
    SynthBucketStats stats;
    stats.name = bucket.name;
    summary.buckets.push_back(stats);
  }
  for (size_t i = 0; i < requests.size(); ++i) {
    const ExampleRequest& r = requests[i];
    LongContextExample e = task.generate(r);
    out.write(example_to_jsonl(e) + "\n");
    auto& stats = *std::find_if(summary.buckets.begin(), summary.buckets.end(),
                                [&](const SynthBucketStats& b) { return b.name == r.bucket; });
    stats.min_length = stats.examples ? std::min(stats.min_length, e.length_tokens) : e.length_tokens;
    stats.max_length = std::max(stats.max_length, e.length_tokens);
    stats.mean_length += static_cast<double>(e.length_tokens);
    stats.mean_shortfall += static_cast<double>(r.target_tokens - e.length_tokens);
    ++stats.examples;
    ++summary.examples;
    if (progress) progress(static_cast<int64_t>(i + 1), static_cast<int64_t>(requests.size()));
  }
  for (auto& stats : summary.buckets) {
    stats.mean_length /= static_cast<double>(std::max<int64_t>(1, stats.examples));
    stats.mean_shortfall /= static_cast<double>(std::max<int64_t>(1, stats.examples));
  }
  out.commit();
  summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return summary;
}

}  // namespace swarmt::data
