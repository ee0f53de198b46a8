#include "swarmt/infer/token_stream.h"

#include "swarmt/core/error.h"

namespace swarmt::infer {

CausalLMStream::CausalLMStream(std::shared_ptr<models::CausalLM> model, int64_t prefill_chunk)
    : model_(std::move(model)), prefill_chunk_(prefill_chunk) {
  SWARMT_CHECK(prefill_chunk_ > 0);
  state_ = model_->new_state(/*batch=*/1);
}

at::Tensor CausalLMStream::feed(const at::Tensor& tokens) {
  SWARMT_CHECK(tokens.dim() == 1 && tokens.size(0) > 0, "feed expects a non-empty 1-D token tensor");
  at::NoGradGuard no_grad;
  at::Tensor last;
  // Only the last position's logits are needed: run the head on it alone.
  for (int64_t start = 0; start < tokens.size(0); start += prefill_chunk_) {
    int64_t n = std::min<int64_t>(prefill_chunk_, tokens.size(0) - start);
    auto hidden = model_->forward_stateful_hidden(tokens.narrow(0, start, n).unsqueeze(0), state_);
    last = hidden.select(1, n - 1).unsqueeze(1);
  }
  return model_->head(last).reshape({-1});
}

}  // namespace swarmt::infer
