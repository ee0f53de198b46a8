// Training and evaluation on synthetic long-context JSONL files (long_context_dataset.h), so that ARMT
// fine-tuning and SWAX training can use what `swarmt data synth` writes.
//
// Training source, config {"type": "jsonl_qa", "path": "data/long_qa.jsonl", "seed": 0, "loss": "answer"}:
// sample i is example order(i) of the file (a fresh shuffle per pass over the file, from the seed),
// tokenized as tokenize_qa does (<bos> prompt " answer" <eos>), then cut or padded to the sequence
// length N:
//   * too long: tokens are removed from the start of the context (after <bos>), so the question and
//     the answer always stay; an answer longer than the sequence is cut at its end;
//   * too short: padded with the pad id; pad positions have no target and their own doc id (1, real
//     tokens 0), so models that reset state or mask attention at document boundaries ignore them;
//   * targets: next-token targets on the answer tokens and <eos> only ("loss": "answer", the default,
//     as BABILong fine-tuning does), or on every real token ("loss": "all").
// Every line is validated when the source is created (errors name file:line); samples then read their
// line from disk, so files of any size cost memory only for their line offsets.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "swarmt/core/json.h"
#include "swarmt/data/batch.h"
#include "swarmt/data/long_context/long_context_dataset.h"
#include "swarmt/data/synthetic_source.h"
#include "swarmt/tokenizer/tokenizer.h"

namespace swarmt::data {

// Reads every example of a JSONL file (validating each line).
std::vector<LongContextExample> read_long_context_examples(const std::string& path);

class LongContextSource : public DataSource {
 public:
  LongContextSource(const std::string& path, tokenizer::Tokenizer tokenizer, SyntheticSpecialIds ids,
                    int64_t sequence_length, uint64_t seed, bool answer_only_loss = true);
  // From its config object (see above).
  static std::shared_ptr<const LongContextSource> from_config(const JsonView& config, tokenizer::Tokenizer tokenizer,
                                                              SyntheticSpecialIds ids, int64_t sequence_length,
                                                              uint64_t default_seed);

  Sample sample(int64_t index) const override;
  int64_t sequence_length() const override { return sequence_length_; }
  std::string describe() const override;

  int64_t num_examples() const { return static_cast<int64_t>(offsets_.size()); }
  // Example i in file order.
  LongContextExample example(int64_t i) const;
  // Which example sample `index` uses.
  int64_t example_index(int64_t index) const;

 private:
  std::string path_;
  std::vector<uint64_t> offsets_;       // byte offset of each example's line
  std::vector<int64_t> line_numbers_;   // its 1-based line number
  tokenizer::Tokenizer tokenizer_;
  SyntheticSpecialIds ids_;
  int64_t sequence_length_;
  uint64_t seed_;
  bool answer_only_loss_;
  mutable std::mutex mutex_;
  mutable std::map<int64_t, std::vector<int64_t>> orders_;  // pass -> permutation (the last few passes)
};

// ---------------------------------------------------------------------------------------------------
// Evaluation

struct QaEvalItem {
  std::string id;
  std::string task;
  std::string bucket;
  int64_t length_tokens = 0;
  double depth = 0;
  std::string prompt;                // qa_prompt(context, question): what the model is given
  std::vector<std::string> answers;  // accepted answers
};

std::vector<QaEvalItem> read_qa_eval_items(const std::string& path);

// Exact match after normalisation: the prediction is cut at its first newline, both sides are trimmed,
// a trailing '.' is dropped, and ASCII letters are compared case-insensitively.
bool qa_exact_match(const std::string& prediction, const std::string& answer);
// The normalised answer occurs in the normalised prediction (first line only).
bool qa_contains_answer(const std::string& prediction, const std::string& answer);

}  // namespace swarmt::data
