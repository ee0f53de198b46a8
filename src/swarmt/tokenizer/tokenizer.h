// A Hugging Face tokenizer.json (BPE model) as a C++ object: text <-> token ids.
//
// encode(text) runs the Hugging Face pipeline (`tokenizers` crate, tokenizer/mod.rs):
//   1. added tokens with normalized=false are cut out of the raw text (leftmost-longest);
//   2. each remaining piece is normalized, then added tokens with normalized=true are cut out;
//   3. the pre-tokenizer splits each piece into words;
//   4. the BPE model encodes each word;
//   5. with add_special_tokens, the post-processor adds e.g. <bos>.
// decode(ids) maps ids to token strings (added tokens by content) and runs the decoder chain.
//
// Gemma 3 (SentencePiece-style BPE with byte fallback) and Qwen / GPT-2 style byte-level BPE files are
// both covered; WordPiece / Unigram models and a few rare components are rejected with a message that
// lists what is supported. Truncation and padding settings in the file are ignored (callers cut and
// pad token lists themselves).
//
// A Tokenizer is cheap to copy (shared immutable state) and its const methods are safe to call from
// several threads at once.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "swarmt/tokenizer/added_tokens.h"

namespace swarmt::tokenizer {

class Tokenizer {
 public:
  // Reads and validates a tokenizer.json; any problem is BadInput naming the file and the field.
  static Tokenizer from_file(const std::string& path);
  // Same from JSON text; `source` names it in error messages.
  static Tokenizer from_json(const std::string& json_text, const std::string& source);

  // Token ids of `text` (must be valid UTF-8, else BadInput). Added/special tokens written literally in
  // the text are recognised. add_special_tokens applies the post-processor (Gemma: leading <bos>).
  std::vector<int32_t> encode(const std::string& text, bool add_special_tokens) const;

  // Text of `ids`; skip_special_tokens drops added tokens marked special. An id outside the vocabulary
  // is BadInput.
  std::string decode(const std::vector<int32_t>& ids, bool skip_special_tokens) const;

  // One more than the largest id of the model vocabulary and the added tokens (Gemma 3: 262145, as
  // <image_soft_token> = 262144 is an added token past the model's 262144 entries).
  int64_t vocab_size() const;
  // Added tokens first, then the model vocabulary.
  std::optional<int32_t> token_to_id(const std::string& token) const;
  // The token string of `id`; BadInput if no token has that id.
  std::string id_to_token(int32_t id) const;
  // Whether `id` is an added token marked special (<bos>, <|im_end|>, ...).
  bool is_special(int32_t id) const;
  const std::vector<AddedToken>& added_tokens() const;
  // The file (or name) this tokenizer was read from.
  const std::string& source() const;

 private:
  struct Impl;
  explicit Tokenizer(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<const Impl> impl_;
};

}  // namespace swarmt::tokenizer
