// Token-by-token decoding for printing generated text as it comes.
//
// Decoding one id at a time is wrong in two ways: a character may be split over several tokens (🦙 is
// four <0xXX> byte-fallback tokens in Gemma, four byte-level tokens in Qwen), and some decoders look at
// neighbours (Metaspace drops the space of the first token only). So the decoder keeps the ids not yet
// printed (`pending`) behind the ids of the last printed piece (`context`, whose text is complete),
// decodes context + pending, and prints the text beyond the context's, holding it back while it ends
// in U+FFFD (an incomplete character). This is the scheme of Hugging Face's DecodeStream. The context
// must be a whole printed piece, not just its last id: a lone trailing byte token of 🦙 would decode
// as garbage and glue onto the next byte run. If the combined text does not extend the context's text
// (HF's ByteFallback turns a whole invalid byte run into U+FFFDs, including bytes already printed), the
// pending ids are decoded on their own instead.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "swarmt/tokenizer/tokenizer.h"

namespace swarmt::tokenizer {

class StreamDecoder {
 public:
  explicit StreamDecoder(Tokenizer tokenizer, bool skip_special_tokens = true);

  // Adds one id; returns the text it completes ("" while a character is still incomplete).
  std::string push(int32_t id);
  // Returns whatever is still held back (an incomplete character comes out as U+FFFD) and resets.
  std::string flush();
  // Forgets all state (start of a new text).
  void reset();

 private:
  // Text of the pending ids: what context + pending adds to the context's text.
  std::string pending_text() const;

  Tokenizer tokenizer_;
  bool skip_special_tokens_;
  std::vector<int32_t> context_;  // ids of the last printed piece
  std::vector<int32_t> pending_;  // ids not printed yet
  std::string context_text_;      // decode(context_)
};

}  // namespace swarmt::tokenizer
