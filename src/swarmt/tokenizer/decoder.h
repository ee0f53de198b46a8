// Decoders of tokenizer.json ("decoder": {...}): token strings -> text.
//
// Like Hugging Face's decode_chain, each decoder maps a list of token strings to a new list; the
// final text is their concatenation. Supported types:
//   ByteLevel     all tokens -> bytes through the byte-level alphabet -> lossy UTF-8 (one string)
//   ByteFallback  runs of <0xXX> tokens -> their bytes as UTF-8; an invalid run gives one U+FFFD per byte
//   Fuse          join everything into one string
//   Replace       {pattern, content} on each token
//   Strip         {content, start, stop}: drop up to `start` leading and `stop` trailing `content` chars
//   Metaspace     {replacement, prepend_scheme}: replacement -> ' '; on the first token the
//                 replacement is dropped instead unless prepend_scheme is never
//   Sequence      {decoders: [...]}
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "swarmt/core/json.h"
#include "swarmt/tokenizer/component_json.h"

namespace swarmt::tokenizer {

class Decoder {
 public:
  virtual ~Decoder() = default;
  virtual void decode_chain(std::vector<std::string>& tokens) const = 0;
};

std::unique_ptr<Decoder> make_decoder(const Json& json, const ComponentPath& where);

}  // namespace swarmt::tokenizer
