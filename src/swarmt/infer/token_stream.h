// The incremental interface generation runs on: feed tokens, get the logits of the last one. A plain
// causal LM streams through its ModelState (KV rings, recurrent states); ARMT streams segment by segment
// through its associative memory. Prompts are fed in chunks so that prefill memory stays bounded.
#pragma once

#include <ATen/ATen.h>

#include <map>
#include <memory>
#include <string>

#include "swarmt/core/sha256.h"
#include "swarmt/models/causal_lm.h"

namespace swarmt::infer {

class TokenStream {
 public:
  virtual ~TokenStream() = default;
  // tokens: int64 (n) for one sequence. Returns the logits (V) after the last token.
  virtual at::Tensor feed(const at::Tensor& tokens) = 0;
  // Bytes held by the streaming state now (KV caches, recurrent states, memories).
  virtual int64_t state_bytes() const = 0;
  // The most bytes the state will hold while taking `more_tokens` more tokens.
  virtual int64_t state_bytes_after(int64_t more_tokens) const = 0;
  virtual int64_t position() const = 0;
  // Writes the state to a file (models/model_state_file.h), with the caller's own entries.
  virtual FileDigest save(const std::string& path, const std::map<std::string, std::string>& user_metadata = {}) = 0;
  // Replaces the state by the one saved in `path` (checked against this model; BadInput naming the file,
  // the state unchanged) and returns the caller's entries saved with it.
  virtual std::map<std::string, std::string> load(const std::string& path) = 0;
};

// BadInput when a state holding `bytes_now` would need `bytes_after` to take `tokens` more tokens and the
// growth does not fit in the available memory (core/memory_budget.h). The message names `what` and the
// number of tokens that would fit. States that do not grow (SWAX, ARMT past one segment) always pass.
void check_context_fits(int64_t bytes_now, int64_t bytes_after, int64_t tokens, const std::string& what);

class CausalLMStream : public TokenStream {
 public:
  // prefill_chunk: longest piece of a prompt run in one forward (bounds activation memory).
  CausalLMStream(std::shared_ptr<models::CausalLM> model, int64_t prefill_chunk = 1024);
  // Runs in c10::InferenceMode: the state's tensors become inference tensors, so any code that later
  // changes the state in place (saving, resetting) must run in inference mode too.
  at::Tensor feed(const at::Tensor& tokens) override;
  int64_t state_bytes() const override { return state_.bytes(); }
  int64_t state_bytes_after(int64_t more_tokens) const override { return state_.bytes_after(more_tokens); }
  int64_t position() const override { return state_.position; }
  FileDigest save(const std::string& path, const std::map<std::string, std::string>& user_metadata = {}) override;
  std::map<std::string, std::string> load(const std::string& path) override;

 private:
  std::shared_ptr<models::CausalLM> model_;
  models::ModelState state_;
  int64_t prefill_chunk_;
};

}  // namespace swarmt::infer
