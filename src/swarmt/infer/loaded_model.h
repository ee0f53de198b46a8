// Everything inference needs from a model directory: the model, its tokenizer, and a way to open a
// streaming session. One entry point for `generate`, `forward` and `eval`, whatever the directory holds
// (a SWAX model, a Hugging Face Llama / Gemma-3 checkpoint, or an ARMT adapter over one of them).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "swarmt/infer/token_stream.h"
#include "swarmt/models/causal_lm.h"
#include "swarmt/tokenizer/tokenizer_config.h"

namespace swarmt::infer {

struct InferenceOptions {
  at::Device device = at::kCPU;
  std::optional<at::ScalarType> dtype;  // nullopt: as stored
  int64_t window = 0;                   // > 0: override the inference window of sliding layers
  int64_t prefill_chunk = 1024;
  bool allow_nonfinite = false;         // load weights holding NaN or ±Inf (models::LoadOptions)
};

class LoadedModel {
 public:
  static LoadedModel load(const std::string& dir, const InferenceOptions& options = {});

  // A fresh streaming session (constant memory for SWAX / ARMT).
  std::unique_ptr<TokenStream> new_stream() const;
  // Full-sequence logits (B, N, V) for debugging / perplexity (no streaming).
  at::Tensor forward(const at::Tensor& tokens) const;

  const tokenizer::Tokenizer& tokenizer() const;
  const std::optional<tokenizer::TokenizerConfig>& tokenizer_config() const { return tokenizer_config_; }
  bool has_tokenizer() const { return tokenizer_.has_value(); }
  // Ids that end generation: the model config's eos ids plus the tokenizer config's eos token.
  std::vector<int64_t> stop_ids() const;
  std::shared_ptr<models::CausalLM> model() const { return model_; }
  const std::string& dir() const { return dir_; }
  std::string describe() const;

 private:
  std::string dir_;
  std::shared_ptr<models::CausalLM> model_;
  std::optional<tokenizer::Tokenizer> tokenizer_;
  std::optional<tokenizer::TokenizerConfig> tokenizer_config_;
  InferenceOptions options_;
};

}  // namespace swarmt::infer
