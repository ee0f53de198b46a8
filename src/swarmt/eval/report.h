// The one report writer for evaluation runs (NIAH, passkey, MQAR, ...).
//
// write_eval_report(dir, run) writes into `dir`:
//   results.json          every sample (id, variant, length, depth, token count, the full prompt text,
//                         expected answers, prediction, score), the aggregates and the run metadata;
//   summary.json          metadata + aggregates only (small; what `swarmt eval compare` reads);
//   summary.md            Markdown: metadata, a variants x lengths table of mean scores, the plots;
//   score_vs_length.svg   mean score vs context length (log2 axis), one line per variant (+ average);
//   depth_heatmap.svg     mean score over length x needle depth, when the samples have depths
//                         (plus depth_heatmap_<variant>.svg per variant when there are several).
// Files are written atomically (temporary file + rename): an interrupted run never leaves a truncated
// report over a good one.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "swarmt/core/json.h"

namespace swarmt::eval {

struct EvalSampleResult {
  std::string id;                    // unique within the run, e.g. "niah_single_1/4096/17"
  std::string variant;               // task or variant name
  int64_t length = 0;                // nominal context length (the bucket of the tables and plots)
  std::optional<double> depth;       // needle depth in percent, when the task has one
  int64_t token_count = -1;          // prompt tokens; -1 unknown
  std::string prompt;
  std::vector<std::string> answers;  // expected answers
  std::string prediction;            // the model's raw output
  double score = 0;                  // 0..100
  Json details;                      // optional task-specific fields (null: none), kept in results.json
};

struct EvalRun {
  Json metadata = Json::object();    // run_name, model, task, seed, decoding, ... (free-form, scalar values
                                     // are listed in summary.md)
  std::vector<EvalSampleResult> samples;
};

struct MeanScore {
  double mean = 0;
  int64_t count = 0;
  // When every score of the group is 0 or 100 (right or wrong), the number right, and the 95 % Wilson
  // interval of the accuracy in percent; successes < 0 otherwise (partial-credit scores).
  int64_t successes = -1;
  double low = 0, high = 0;
  bool has_interval() const { return successes >= 0 && count > 0; }
};

// Means of the sample scores, grouped the ways the reports show them.
struct EvalAggregates {
  std::vector<std::string> variants;  // in first-seen order
  std::vector<int64_t> lengths;       // ascending
  std::vector<double> depths;         // ascending depth keys, empty if no sample has a depth: the
                                      // depths rounded to 2 decimals, or, when there are more distinct
                                      // depths than fit a table (random placement), bins [key, key + 10)
  double depth_bin_width = 0;         // 0: exact depths; 10: binned
  std::map<std::pair<std::string, int64_t>, MeanScore> by_variant_length;
  std::map<std::string, MeanScore> by_variant;                 // over all the variant's samples
  std::map<int64_t, MeanScore> by_length;                       // mean of the variant means (RULER's average)
  std::map<std::pair<int64_t, double>, MeanScore> by_length_depth;  // over all variants' samples
  std::map<std::string, std::map<std::pair<int64_t, double>, MeanScore>> by_variant_length_depth;
  double overall = 0;                 // mean of the by_length means
};

// Groups the scores. More than `max_exact_depths` distinct depths are binned into 10% bins.
EvalAggregates aggregate_results(const std::vector<EvalSampleResult>& samples, size_t max_exact_depths = 20);

// Row label of a depth key: "25" (exact) or "20-30" (binned).
std::string depth_label(const EvalAggregates& aggregates, double depth_key);

Json aggregates_to_json(const EvalAggregates& aggregates);
// Reads the "aggregates" object of results.json / summary.json (by_variant_length, by_length, overall);
// `where` names the file in errors.
EvalAggregates aggregates_from_json(const Json& json, const std::string& where);

struct ReportOptions {
  std::string title = "Evaluation";  // heading of summary.md and the plot titles
  bool include_prompts = true;       // results.json carries the full prompt text of every sample
  std::string length_name = "context length";  // what a sample's `length` measures (e.g. "distance")
  // Vertical marks on the score plot (e.g. the model's window and training length); also stored in the
  // run metadata ("plot_marks") so that `eval compare` draws them.
  std::vector<std::pair<double, std::string>> marks;
};

// "85.0 [78.1, 90.2]" when the score has an interval, else "85.00".
std::string format_score(const MeanScore& score);

// Writes the report files listed above into `directory` (created if needed).
void write_eval_report(const std::string& directory, const EvalRun& run, const ReportOptions& options = {});

// Label of a length bucket for tables and file names: 4096 -> "4k", 131072 -> "128k".
std::string length_label(int64_t length);

}  // namespace swarmt::eval
