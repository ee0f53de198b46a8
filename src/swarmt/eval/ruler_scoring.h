// RULER scoring (NVIDIA/RULER scripts/eval/synthetic/constants.py and scripts/eval/evaluate.py).
//
// Scores are substring matches, case-insensitive, after a light clean-up of the prediction:
//   string_match_all   fraction of the references r with r.lower() in pred.lower()  (x 100)
//   string_match_part  1 if any reference is contained, else 0                       (x 100)
// RULER averages the per-sample values over the samples of a task (and rounds to 2 decimals for its
// summary). niah_*, variable tracking, common/frequent words extraction use string_match_all; the QA
// tasks use string_match_part. Lowercasing here is ASCII-only (Python lowercases all of Unicode); the
// answers of every synthetic task are ASCII.
#pragma once

#include <string>
#include <vector>

namespace swarmt::eval {

enum class RulerMetric { StringMatchAll, StringMatchPart };

std::string to_string(RulerMetric metric);  // "string_match_all" / "string_match_part"

// evaluate.py postprocess_pred: strip surrounding whitespace, turn every control character
// [\x00-\x1f] into "\n", strip again.
std::string postprocess_prediction(const std::string& prediction);

// Per-sample scores in [0, 100] of an already post-processed prediction. BadInput if there are no
// references (RULER would divide by zero).
double string_match_all(const std::string& prediction, const std::vector<std::string>& references);
double string_match_part(const std::string& prediction, const std::vector<std::string>& references);

// The metric RULER uses for a task, by task or variant name: "qa_1", "qa_2", "qa" -> part; everything
// else (niah_*, vt / variable_tracking, cwe, fwe, passkey, ...) -> all.
RulerMetric metric_for_task(const std::string& task);

// postprocess_prediction + the metric: the score of one sample, in [0, 100].
double score_prediction(RulerMetric metric, const std::string& raw_prediction,
                        const std::vector<std::string>& references);

}  // namespace swarmt::eval
