#include "swarmt/infer/generate.h"

#include <algorithm>
#include <chrono>

#include "swarmt/core/error.h"

namespace swarmt::infer {

GenerateResult generate(TokenStream& stream, const std::vector<int64_t>& prompt, const GenerateOptions& options,
                        const std::function<bool(int64_t)>& on_token) {
  SWARMT_CHECK_INPUT(!prompt.empty(), "the prompt is empty (nothing to condition on)");
  GenerateResult result;
  result.prompt_tokens = static_cast<int64_t>(prompt.size());
  const int64_t context = result.prompt_tokens + options.max_new_tokens;
  check_context_fits(stream.state_bytes(), stream.state_bytes_after(context), context,
                     str_cat("generating ", result.prompt_tokens, " prompt + ", options.max_new_tokens, " new tokens"));
  Sampler sampler(options.sampling);
  auto t0 = std::chrono::steady_clock::now();
  at::Tensor logits = stream.feed(at::tensor(prompt, at::TensorOptions().dtype(at::kLong)));
  auto t1 = std::chrono::steady_clock::now();
  result.prefill_seconds = std::chrono::duration<double>(t1 - t0).count();
  result.stop_reason = "length";
  auto limited = [&](const at::Tensor& l) {
    return options.vocab_limit > 0 && l.size(-1) > options.vocab_limit ? l.narrow(-1, 0, options.vocab_limit) : l;
  };
  for (int64_t i = 0; i < options.max_new_tokens; ++i) {
    int64_t id = sampler.sample(limited(logits));
    if (std::find(options.stop_ids.begin(), options.stop_ids.end(), id) != options.stop_ids.end()) {
      result.stop_reason = "stop_id";
      break;
    }
    result.tokens.push_back(id);
    if (on_token && !on_token(id)) {
      result.stop_reason = "callback";
      break;
    }
    if (i + 1 == options.max_new_tokens) break;  // no need to feed the last token
    logits = stream.feed(at::full({1}, id, at::TensorOptions().dtype(at::kLong)));
    ++result.decode_steps;
  }
  result.decode_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
  result.state_bytes = stream.state_bytes();
  return result;
}

}  // namespace swarmt::infer
