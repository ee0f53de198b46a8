#include "swarmt/infer/token_stream.h"

#include <algorithm>

#include "swarmt/core/error.h"
#include "swarmt/core/memory_budget.h"
#include "swarmt/models/model_state_file.h"

namespace swarmt::infer {

void check_context_fits(int64_t bytes_now, int64_t bytes_after, int64_t tokens, const std::string& what) {
  const int64_t growth = bytes_after - bytes_now;
  const int64_t available = available_memory_bytes();
  if (growth <= 0 || available < 0 || growth <= available) return;
  const double per_token = static_cast<double>(growth) / static_cast<double>(std::max<int64_t>(tokens, 1));
  check_memory_fits(growth, str_cat(what, " (", tokens, " tokens; the KV cache of its full-attention layers grows by ",
                                    format_bytes(static_cast<int64_t>(per_token)), " per token)"),
                    str_cat("about ", static_cast<int64_t>(static_cast<double>(available) / per_token),
                            " tokens fit: shorten the input, or use a model whose state does not grow with the "
                            "context (SWAX sliding-window and recurrent layers, or ARMT)"));
}

CausalLMStream::CausalLMStream(std::shared_ptr<models::CausalLM> model, int64_t prefill_chunk)
    : model_(std::move(model)), prefill_chunk_(prefill_chunk) {
  SWARMT_CHECK(prefill_chunk_ > 0);
  state_ = model_->new_state(/*batch=*/1);
}

at::Tensor CausalLMStream::feed(const at::Tensor& tokens) {
  SWARMT_CHECK(tokens.dim() == 1 && tokens.size(0) > 0, "feed expects a non-empty 1-D token tensor");
  // Inference mode, not only no-grad: its tensors carry no version counter or view tracking, which
  // is a measurable part of a decode step's ~30 small ATen ops per layer.
  c10::InferenceMode inference;
  at::Tensor last;
  // Only the last position's logits are needed: run the head on it alone.
  for (int64_t start = 0; start < tokens.size(0); start += prefill_chunk_) {
    int64_t n = std::min<int64_t>(prefill_chunk_, tokens.size(0) - start);
    auto hidden = model_->forward_stateful_hidden(tokens.narrow(0, start, n).unsqueeze(0), state_);
    last = hidden.select(1, n - 1).unsqueeze(1);
  }
  return model_->head(last).reshape({-1});
}

FileDigest CausalLMStream::save(const std::string& path, const std::map<std::string, std::string>& user_metadata) {
  return models::save_model_state(state_, *model_, path, user_metadata);
}

std::map<std::string, std::string> CausalLMStream::load(const std::string& path) {
  auto loaded = models::load_model_state(*model_, path);  // throws before anything here changes
  state_ = std::move(loaded.state);
  return loaded.user_metadata;
}

}  // namespace swarmt::infer
