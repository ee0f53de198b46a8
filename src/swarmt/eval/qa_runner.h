// Question answering on `swarmt data synth` JSONL files (long_qa, type_prediction, facts_in_noise):
// greedy answers, exact-match scores, reported by bucket (variant), length and depth like the RULER tasks.
//
// The prompt is tokenized exactly as training tokenizes it (tokenize_qa: [bos] prompt), so a model
// fine-tuned on the same format is evaluated on its own terms. context_limit > 0 keeps only the last
// context_limit tokens of the prompt (after [bos]): a model with a context of one segment sees what
// fits in it, the baseline ARMT is compared against.
#pragma once

#include <string>
#include <vector>

#include "swarmt/eval/niah_runner.h"
#include "swarmt/eval/report.h"
#include "swarmt/infer/loaded_model.h"

namespace swarmt::eval {

struct QaRunOptions {
  std::string data_path;
  int64_t context_limit = 0;   // > 0: prompt truncated to its last tokens
  int64_t max_examples = 0;    // > 0: the first N examples of the file
  int64_t max_new_tokens = 0;  // 0: the answer's token count + 4
  bool quiet = false;
};

// Score per example: 100 when the first line of the prediction equals an accepted answer
// (qa_exact_match). Sample length: the bucket's length when its name is one ("1k", "4096"), otherwise
// the example's length_tokens.
EvalRun run_qa(const infer::LoadedModel& model, const QaRunOptions& options,
               std::vector<LengthResources>* resources = nullptr);

}  // namespace swarmt::eval
