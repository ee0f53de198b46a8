// The body of POST /v1/completions and /v1/chat/completions, parsed and checked field by field: every
// wrong field is a 400 naming it (serve/api_error.h), before any model work starts.
//
// Fields (OpenAI's names and defaults):
//   model            string; any value is accepted (the server has one model)
//   prompt           completions: a string, an array of token ids, or an array holding one of those
//   messages         chat: [{"role": "system"|"user"|"assistant", "content": string | [{"type": "text",
//                    "text": string}, ...]}, ...]
//   max_tokens       0..limits.max_tokens (default: 16 for completions, limits.max_tokens for chat);
//                    chat also reads max_completion_tokens
//   temperature      0..2 (default 1; 0 = greedy)      top_p  (0, 1] (default 1)
//   top_k            0.. (an extension, as llama.cpp's server; 0 = off)
//   stop             a string or up to 4 non-empty strings
//   seed             an integer (default: a fresh random seed when sampling)
//   stream           bool; stream_options.include_usage adds a last chunk with the usage counts
//   session_id       swarmt's extension (also the X-Session-Id header): see serve/model_service.h
//   ignore_eos       an extension: do not stop at the end-of-sequence token
//   return_tokens    an extension: the choice also lists the generated token ids ("token_ids"); a
//                    stream then sends one chunk per token
// Accepted only at their neutral values: n = 1, best_of = 1, echo = false, logprobs = null/false/0,
// presence_penalty = 0, frequency_penalty = 0, logit_bias = {}, suffix = null; "user" is accepted and
// ignored. Any other field is refused: a typo must not silently do nothing.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "swarmt/core/json.h"

namespace swarmt::serve {

struct RequestLimits {
  int64_t max_tokens = 4096;         // the largest max_tokens accepted
  size_t max_prompt_ids = 1 << 24;   // the longest prompt given as token ids
};

struct ChatTurn {
  std::string role;
  std::string content;
};

struct CompletionRequest {
  bool chat = false;
  std::string model;
  std::optional<std::string> prompt_text;  // completions: the prompt as text ...
  std::vector<int64_t> prompt_ids;         // ... or as token ids (checked against the vocabulary later)
  std::vector<ChatTurn> messages;          // chat
  int64_t max_tokens = 16;
  double temperature = 1.0;
  double top_p = 1.0;
  int64_t top_k = 0;
  std::vector<std::string> stop;
  std::optional<uint64_t> seed;
  bool stream = false;
  bool include_usage = false;
  bool ignore_eos = false;
  bool return_tokens = false;
  std::string session_id;  // "" = none
};

CompletionRequest parse_completion_request(const Json& body, bool chat, const RequestLimits& limits);

// Request bodies nest a few levels (messages[i].content[j].text); a body of 8 MiB of '[' would make the
// parser build millions of nested values. Refused (400) past `max_depth` levels, before parsing.
void check_json_nesting(const std::string& body, int max_depth = 32);

// Session ids name files in --state-dir: 1..128 of [A-Za-z0-9_.-], not starting with '.'.
// Throws a 400 naming `param` otherwise.
void check_session_id(const std::string& id, const std::string& param);

}  // namespace swarmt::serve
