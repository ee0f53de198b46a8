// Normalizers of tokenizer.json ("normalizer": {...}): text -> text before pre-tokenization.
//
// Supported types and their Hugging Face semantics:
//   NFC, NFD, NFKC, NFKD   Unicode normalization forms
//   Lowercase              per code point full lowercase mapping
//   Replace                {pattern: {String|Regex}, content}: every match -> content
//   Prepend                {prepend}: prefix non-empty text
//   Strip                  {strip_left, strip_right}: remove Unicode whitespace at the ends
//   Sequence               {normalizers: [...]}: apply in order
// We keep only the normalized text, not HF's alignment bookkeeping (offsets are not part of our API).
#pragma once

#include <memory>
#include <string>

#include "swarmt/core/json.h"
#include "swarmt/tokenizer/component_json.h"

namespace swarmt::tokenizer {

class Normalizer {
 public:
  virtual ~Normalizer() = default;
  // `text` is valid UTF-8; so is the result.
  virtual std::string normalize(std::string text) const = 0;
};

// Builds the normalizer described by `json` (a component object); BadInput naming `where` for an
// unknown type or a malformed field.
std::unique_ptr<Normalizer> make_normalizer(const Json& json, const ComponentPath& where);

}  // namespace swarmt::tokenizer
