#include "swarmt/infer/loaded_model.h"

#include <filesystem>

#include "swarmt/core/error.h"
#include "swarmt/core/memory_budget.h"
#include "swarmt/models/model_io.h"

namespace fs = std::filesystem;

namespace swarmt::infer {

LoadedModel LoadedModel::load(const std::string& dir, const InferenceOptions& options) {
  LoadedModel m;
  m.dir_ = dir;
  m.options_ = options;
  models::LoadOptions load_options;
  load_options.device = options.device;
  load_options.dtype = options.dtype;
  load_options.allow_nonfinite = options.allow_nonfinite;
  // Before loading anything: a window sizes the KV ring every sliding layer allocates per stream.
  SWARMT_CHECK_INPUT(options.window >= 0 && options.window <= kMaxAttentionWindow, "--window: ", options.window,
                     " is not a window in 1..", kMaxAttentionWindow, " tokens (0: the model's own)");
  SWARMT_CHECK_INPUT(options.prefill_chunk >= 1 && options.prefill_chunk <= kMaxAttentionWindow, "--prefill-chunk: ",
                     options.prefill_chunk, " is not a chunk size in 1..", kMaxAttentionWindow, " tokens");
  m.model_ = models::load_model(dir, load_options);
  if (options.window > 0) {
    SWARMT_CHECK_INPUT(m.model_->inference_window() > 0, "--window: ", dir, " has no sliding-window layers");
    m.model_->set_inference_window(options.window);
  }
  if (fs::exists(dir + "/tokenizer.json")) {
    auto files = tokenizer::load_tokenizer_dir(dir);
    m.tokenizer_ = files.tokenizer;
    m.tokenizer_config_ = files.config;
  }
  return m;
}

std::unique_ptr<TokenStream> LoadedModel::new_stream() const {
  return std::make_unique<CausalLMStream>(model_, options_.prefill_chunk);
}

at::Tensor LoadedModel::forward(const at::Tensor& tokens) const {
  at::NoGradGuard no_grad;
  return model_->forward(tokens);
}

const tokenizer::Tokenizer& LoadedModel::tokenizer() const {
  SWARMT_CHECK_INPUT(tokenizer_.has_value(), dir_, ": no tokenizer.json (pass token ids instead of text)");
  return *tokenizer_;
}

std::vector<int64_t> LoadedModel::stop_ids() const {
  std::vector<int64_t> ids = model_->eos_token_ids();
  if (tokenizer_ && tokenizer_config_ && tokenizer_config_->eos_token) {
    if (auto id = tokenizer_->token_to_id(*tokenizer_config_->eos_token)) {
      if (std::find(ids.begin(), ids.end(), *id) == ids.end()) ids.push_back(*id);
    }
  }
  return ids;
}

std::string LoadedModel::describe() const {
  return str_cat(model_->model_type(), " model, ", model_->num_layers(), " layers, ", model_->num_parameters(),
                 " parameters, ", models::dtype_name(model_->dtype()));
}

}  // namespace swarmt::infer
