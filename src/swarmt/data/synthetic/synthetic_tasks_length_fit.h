// Fitting a synthetic long-context prompt to a token budget.
//
// RULER sizes its haystacks (N essay words, N filler paragraphs, N distractor needles) so that
//   tokens(prompt(N)) + tokens_to_generate <= max_seq_length,
// taking the largest such N, with the model's own tokenizer. The tokenizer is the caller's (a
// TokenCounter), and it can be expensive on 131k-token prompts, so the search keeps its calls few: the
// token count is nearly linear in N, so it interpolates (secant steps on the bracket [largest N known to
// fit, smallest N known not to fit]) and falls back to bisection when interpolation stops shrinking the
// bracket. Typical cost: 4-7 counter calls for any target length.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace swarmt::data {

// Number of tokens of a text under the model's tokenizer (as the model will see it: same special tokens).
using TokenCounter = std::function<int64_t(const std::string&)>;

struct LengthFitOptions {
  int64_t max_seq_length = 0;      // the budget: prompt tokens + tokens_to_generate
  int64_t tokens_to_generate = 0;  // reserved for the answer (RULER NIAH: 128)
  int64_t min_units = 1;           // smallest haystack size the task allows
  int64_t first_probe = 0;         // size of the first trial (RULER's "incremental"); <= 0: min_units
  int max_counter_calls = 64;      // safety stop; the search normally needs far fewer
};

struct LengthFit {
  int64_t units = 0;            // the largest haystack size found that fits
  int64_t prompt_tokens = 0;    // tokens(prompt(units))
  double tokens_per_unit = 0;   // slope estimate, used to shrink a sample that overshoots
  int counter_calls = 0;
};

// Finds the largest haystack size whose prompt fits the budget. `build(units)` returns the prompt text
// for that size. BadInput if even `min_units` does not fit (the budget is too small for the task).
LengthFit fit_haystack_size(const std::function<std::string(int64_t)>& build, const TokenCounter& count_tokens,
                            const LengthFitOptions& options);

}  // namespace swarmt::data
