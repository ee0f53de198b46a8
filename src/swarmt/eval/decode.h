// Evaluation-time helpers over a loaded model: greedy answers to prompts, and logits of long sequences
// computed chunk by chunk through the streaming state (so memory stays flat for SWAX / ARMT models).
#pragma once

#include <ATen/ATen.h>

#include <functional>
#include <string>
#include <vector>

#include "swarmt/infer/loaded_model.h"

namespace swarmt::eval {

struct Answer {
  std::string text;        // decoded prediction (special tokens skipped)
  int64_t prompt_tokens = 0;
  int64_t generated_tokens = 0;
  int64_t state_bytes = 0; // streaming state after generation
};

// Greedy decoding of at most max_new_tokens after `prompt` (tokenized with the model's special tokens),
// stopping at the model's end-of-sequence ids.
Answer greedy_answer(const infer::LoadedModel& model, const std::string& prompt, int64_t max_new_tokens);
Answer greedy_answer_ids(const infer::LoadedModel& model, const std::vector<int64_t>& prompt_ids,
                         int64_t max_new_tokens);

// The one up-front check of the context lengths an evaluation will run, before any input is built:
// each must be positive and fit in memory with its text and ids (kMinBytesPerContextToken per token) and
// with the growth of the model's streaming state (a full-attention KV cache grows with the context).
// BadInput naming `option` ("--lengths: 1000000000000 tokens need about 14.6 TiB of memory ...").
void check_context_lengths(const infer::LoadedModel& model, const std::vector<int64_t>& lengths,
                           const std::string& option);

// Runs `tokens` (int64, (N)) through a fresh streaming state in chunks of `chunk` tokens and calls
// on_logits(offset, logits (n, V)) for each chunk.
void stream_logits(const infer::LoadedModel& model, const at::Tensor& tokens, int64_t chunk,
                   const std::function<void(int64_t, const at::Tensor&)>& on_logits);

}  // namespace swarmt::eval
