// Token generation over a TokenStream: chunked prefill of the prompt, then one token at a time until
// max_new_tokens, a stop id, or the caller's callback says stop (stop strings are checked there, on
// text). Memory is the stream's state: constant for SWAX models.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "swarmt/infer/sampler.h"
#include "swarmt/infer/token_stream.h"

namespace swarmt::infer {

struct GenerateOptions {
  int64_t max_new_tokens = 128;
  SamplingOptions sampling;
  std::vector<int64_t> stop_ids;  // e.g. EOS ids
  // > 0: only ids below it are sampled. Checkpoints often pad the embedding past the tokenizer's
  // vocabulary (to a multiple of 64 or 128); those rows have no text, and a random or barely trained
  // model would otherwise sample them and the decoder could not print them.
  int64_t vocab_limit = 0;
};

struct GenerateResult {
  std::vector<int64_t> tokens;     // generated ids (the stop id, if any, excluded)
  std::string stop_reason;         // "length", "stop_id", "callback"
  int64_t prompt_tokens = 0;
  double prefill_seconds = 0;
  double decode_seconds = 0;       // from the end of the prefill to the last token
  int64_t decode_steps = 0;        // forward passes after the prefill: the first token comes from the
                                   // prefill's logits, and the last one is not fed back
  int64_t state_bytes = 0;         // stream state after generation
};

// on_token(id) is called for every generated id; returning false stops generation (after that token).
GenerateResult generate(TokenStream& stream, const std::vector<int64_t>& prompt, const GenerateOptions& options,
                        const std::function<bool(int64_t)>& on_token = {});

}  // namespace swarmt::infer
