#include "swarmt/data/synthetic/synthetic_tasks_length_fit.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "swarmt/core/error.h"

namespace swarmt::data {

LengthFit fit_haystack_size(const std::function<std::string(int64_t)>& build, const TokenCounter& count_tokens,
                            const LengthFitOptions& options) {
  const int64_t budget = options.max_seq_length - options.tokens_to_generate;
  SWARMT_CHECK_INPUT(options.max_seq_length > 0, "max_seq_length must be positive (got ", options.max_seq_length, ")");
  SWARMT_CHECK_INPUT(budget > 0, "max_seq_length ", options.max_seq_length, " leaves no room for the prompt after ",
                     options.tokens_to_generate, " tokens to generate");
  SWARMT_CHECK(options.min_units >= 1);

  LengthFit fit;
  constexpr int64_t kUnknown = -1;
  int64_t lo = kUnknown, hi = kUnknown;  // largest size known to fit, smallest known not to fit
  int64_t t_lo = 0, t_hi = 0;
  int64_t last_u = kUnknown, last_t = 0;  // the previous evaluation, for a secant slope before bracketing
  double slope = 0;

  auto evaluate = [&](int64_t units) {
    int64_t tokens = count_tokens(build(units));
    SWARMT_CHECK_INPUT(tokens >= 0, "token counter returned a negative count (", tokens, ")");
    ++fit.counter_calls;
    if (last_u != kUnknown && last_u != units && tokens != last_t)
      slope = static_cast<double>(tokens - last_t) / static_cast<double>(units - last_u);
    last_u = units;
    last_t = tokens;
    if (tokens <= budget) {
      if (lo == kUnknown || units > lo) {
        lo = units;
        t_lo = tokens;
      }
    } else if (hi == kUnknown || units < hi) {
      hi = units;
      t_hi = tokens;
    }
  };

  int64_t probe = std::max(options.min_units, options.first_probe);
  evaluate(probe);
  // Before a second point exists, tokens/unit including the fixed template overhead over-estimates the
  // slope, so the first jump lands below the budget (safe side).
  slope = static_cast<double>(last_t) / static_cast<double>(probe);
  int64_t previous_width = std::numeric_limits<int64_t>::max();
  bool bisect_next = false;

  while (fit.counter_calls < options.max_counter_calls) {
    if (lo != kUnknown && hi != kUnknown && hi - lo <= 1) break;
    if (hi != kUnknown && hi <= options.min_units) break;  // even the smallest size does not fit
    double rate = std::max(slope, 1e-9);
    int64_t guess;
    if (lo != kUnknown && hi != kUnknown) {
      rate = std::max(static_cast<double>(t_hi - t_lo) / static_cast<double>(hi - lo), 1e-9);
      guess = bisect_next ? lo + (hi - lo) / 2
                          : lo + static_cast<int64_t>(std::floor(static_cast<double>(budget - t_lo) / rate));
      guess = std::clamp(guess, lo + 1, hi - 1);
    } else if (lo != kUnknown) {
      // Only a lower point: jump to where the line predicts the budget (at least one unit further).
      double step = std::floor(static_cast<double>(budget - t_lo) / rate);
      guess = lo + std::max<int64_t>(1, static_cast<int64_t>(std::min(step, 4e15)));
    } else {
      // Only an upper point: jump down by the predicted excess (at least one unit).
      double step = std::ceil(static_cast<double>(t_hi - budget) / rate);
      guess = std::max(options.min_units, hi - std::max<int64_t>(1, static_cast<int64_t>(std::min(step, 4e15))));
    }
    evaluate(guess);
    // Interpolation can creep towards one end of the bracket; if a step did not halve it, bisect once.
    if (lo != kUnknown && hi != kUnknown) {
      int64_t width = hi - lo;
      bisect_next = !bisect_next && width * 2 > previous_width;
      previous_width = width;
    }
  }

  SWARMT_CHECK_INPUT(lo != kUnknown, "max_seq_length ", options.max_seq_length,
                     " is too small for this task: the smallest haystack (", options.min_units,
                     " units) already gives a ", t_hi, "-token prompt, plus ", options.tokens_to_generate,
                     " tokens to generate");
  fit.units = lo;
  fit.prompt_tokens = t_lo;
  fit.tokens_per_unit = hi != kUnknown && hi > lo ? static_cast<double>(t_hi - t_lo) / static_cast<double>(hi - lo)
                                                  : std::max(slope, 1e-9);
  return fit;
}

}  // namespace swarmt::data
