#include "swarmt/eval/decode.h"

#include "swarmt/core/error.h"
#include "swarmt/core/memory_budget.h"
#include "swarmt/infer/generate.h"

namespace swarmt::eval {

Answer greedy_answer_ids(const infer::LoadedModel& model, const std::vector<int64_t>& prompt_ids, int64_t max_new_tokens) {
  infer::GenerateOptions options;
  options.max_new_tokens = max_new_tokens;
  options.stop_ids = model.stop_ids();
  auto stream = model.new_stream();
  auto result = infer::generate(*stream, prompt_ids, options);
  Answer answer;
  std::vector<int32_t> ids(result.tokens.begin(), result.tokens.end());
  answer.text = model.has_tokenizer() ? model.tokenizer().decode(ids, /*skip_special_tokens=*/true) : std::string();
  answer.prompt_tokens = result.prompt_tokens;
  answer.generated_tokens = static_cast<int64_t>(result.tokens.size());
  answer.state_bytes = result.state_bytes;
  return answer;
}

Answer greedy_answer(const infer::LoadedModel& model, const std::string& prompt, int64_t max_new_tokens) {
  auto ids32 = model.tokenizer().encode(prompt, /*add_special_tokens=*/true);
  std::vector<int64_t> ids(ids32.begin(), ids32.end());
  return greedy_answer_ids(model, ids, max_new_tokens);
}

void check_context_lengths(const infer::LoadedModel& model, const std::vector<int64_t>& lengths,
                           const std::string& option) {
  SWARMT_CHECK_INPUT(!lengths.empty(), option, ": no length given");
  for (int64_t length : lengths)
    check_count_fits(length, static_cast<double>(kMinBytesPerContextToken), option, "token",
                     "choose shorter lengths");
  auto stream = model.new_stream();
  for (int64_t length : lengths)
    infer::check_context_fits(stream->state_bytes(), stream->state_bytes_after(length), length,
                              str_cat(option, ": a context of ", length, " tokens"));
}

void stream_logits(const infer::LoadedModel& model, const at::Tensor& tokens, int64_t chunk,
                   const std::function<void(int64_t, const at::Tensor&)>& on_logits) {
  SWARMT_CHECK(tokens.dim() == 1 && chunk > 0);
  at::NoGradGuard no_grad;
  auto lm = model.model();
  auto state = lm->new_state(1);
  infer::check_context_fits(state.bytes(), state.bytes_after(tokens.size(0)), tokens.size(0),
                            "scoring a sequence");
  for (int64_t start = 0; start < tokens.size(0); start += chunk) {
    const int64_t n = std::min<int64_t>(chunk, tokens.size(0) - start);
    auto logits = lm->forward_stateful(tokens.narrow(0, start, n).unsqueeze(0), state);
    on_logits(start, logits.squeeze(0));
  }
}

}  // namespace swarmt::eval
