// Synthetic long-context datasets: the example format shared by the generators (long_qa.h,
// type_prediction.h, facts_in_noise.h), the training/evaluation text built from it, and length buckets.
//
// One example is one JSONL line:
//   {"id": "long_qa/in/17", "task": "long_qa", "bucket": "in", "length_tokens": 4093,
//    "context": "...", "question": "Question: What was ...?\nAnswer:", "answer": "4,512 thousand dollars",
//    "depth": 37.5}
// The model sees   prompt = context + "\n\n" + question        (qa_prompt)
// and learns       " " + answer, then <eos>                    (qa_answer_continuation)
// length_tokens counts the whole training sequence with the model's tokenizer: <bos> (if the tokenizer
// adds one) + prompt + continuation + <eos> (if it has one); see tokenize_qa. A generator fits its context
// so that length_tokens <= the target length of the example, as close to it as the unit of the context
// (a word of prose, a line of code) allows. depth is where the evidence for the answer starts, in percent
// of the context's characters (0 = first character, 100 = end), as the NIAH reports use it.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "swarmt/core/json.h"
#include "swarmt/data/synthetic/synthetic_tasks_length_fit.h"
#include "swarmt/data/synthetic_source.h"
#include "swarmt/tokenizer/tokenizer.h"

namespace swarmt::data {

struct LongContextExample {
  std::string id;
  std::string task;
  std::string bucket;
  int64_t length_tokens = 0;
  std::string context;
  std::string question;
  std::string answer;
  double depth = 0;  // percent of the context before the evidence
};

// context + "\n\n" + question.
std::string qa_prompt(const std::string& context, const std::string& question);
// " " + answer: what follows the prompt (the answer tokens carry the loss).
std::string qa_answer_continuation(const std::string& answer);

// The JSONL line of an example (keys in the order above, no trailing newline).
std::string example_to_jsonl(const LongContextExample& example);
// An example from a parsed JSONL object. Every field must be present with the right type; BadInput
// "<where>: field 'answer' must be a string (got 3)" otherwise.
LongContextExample example_from_json(const Json& record, const std::string& where);

// ---------------------------------------------------------------------------------------------------
// Tokenization of an example, the one definition used for lengths, training and evaluation.

struct QaTokens {
  std::vector<int64_t> ids;  // [bos] prompt-tokens continuation-tokens [eos]
  size_t answer_begin = 0;   // index of the first continuation token
};

QaTokens tokenize_qa(const tokenizer::Tokenizer& tokenizer, const SyntheticSpecialIds& ids, const std::string& prompt,
                     const std::string& answer);

// Token counts the generators fit their contexts with: prompt_tokens(prompt) + answer_tokens(answer) ==
// tokenize_qa(prompt, answer).ids.size().
struct QaLengthCounter {
  TokenCounter prompt_tokens;  // [bos] + tokens(prompt)
  TokenCounter answer_tokens;  // tokens(" " + answer) + [eos]
};

QaLengthCounter make_qa_length_counter(const tokenizer::Tokenizer& tokenizer, const SyntheticSpecialIds& ids);

// ---------------------------------------------------------------------------------------------------
// Fitting a context to a token budget.

// A context built from `units` pieces of filler (words of prose, lines of code), and the depth of its
// evidence.
struct ContextDraft {
  std::string context;
  double depth = 0;
};

struct FittedContext {
  ContextDraft draft;
  int64_t length_tokens = 0;
  int64_t units = 0;
};

// The largest number of units (>= 1) whose example fits in `target_tokens`, by the search of
// synthetic_tasks_length_fit.h. BadInput if even one unit does not fit.
FittedContext fit_context(const std::function<ContextDraft(int64_t)>& build, const std::string& question,
                          const std::string& answer, int64_t target_tokens, const QaLengthCounter& counter);

// ---------------------------------------------------------------------------------------------------
// Length buckets and generators.

struct LengthBucket {
  std::string name;
  int64_t min_tokens = 0;  // each example draws its target length uniformly in [min_tokens, max_tokens]
  int64_t max_tokens = 0;
};

// in: 2S..8S, long: 16S..32S, ood: 64S (S = segment_length).
std::vector<LengthBucket> default_length_buckets(int64_t segment_length);
// "in:2048,long:8192-16384,ood:32k": name:LENGTH or name:MIN-MAX; BadInput naming `option` otherwise.
std::vector<LengthBucket> parse_length_buckets(const std::string& spec, const std::string& option);
// "1k,4k,16384": one bucket per length, named as written.
std::vector<LengthBucket> parse_length_list(const std::string& spec, const std::string& option);
// "4096", "4k" (x1024), "1m" (x1048576); BadInput naming `option` if not a positive count.
int64_t parse_token_count(const std::string& text, const std::string& option);

struct ExampleRequest {
  std::string id;
  std::string bucket;
  int64_t target_tokens = 0;
  uint64_t seed = 0;
  std::optional<double> depth;  // percent; random when absent
};

// A generator of one task. generate() is a pure function of the request.
class LongContextTask {
 public:
  virtual ~LongContextTask() = default;
  virtual std::string name() const = 0;
  virtual LongContextExample generate(const ExampleRequest& request) const = 0;
};

// Number of (possibly overlapping) occurrences of `needle` in `text`.
int64_t count_occurrences(const std::string& text, const std::string& needle);
// Occurrences of `word` in `text` not preceded or followed by an ASCII letter or digit.
int64_t count_word_occurrences(const std::string& text, const std::string& word);

}  // namespace swarmt::data
