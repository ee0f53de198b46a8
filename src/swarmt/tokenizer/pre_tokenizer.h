// Pre-tokenizers of tokenizer.json ("pre_tokenizer": {...}): split normalized text into the "words"
// that the BPE model encodes independently.
//
// Supported types (Hugging Face semantics):
//   Split           {pattern: {String|Regex}, behavior, invert}
//   ByteLevel       {add_prefix_space, use_regex}: GPT-2 regex split, then bytes -> byte-level alphabet
//                   (trim_offsets only concerns offsets and is ignored)
//   Digits          {individual_digits}: numeric code points isolated one by one, or as runs
//   Metaspace       {replacement, prepend_scheme: always|first|never (or legacy add_prefix_space),
//                   split}: ' ' -> replacement, optional prefix, split before each replacement
//   Whitespace      keep runs of \w+ and of [^\w\s]+, drop the rest
//   WhitespaceSplit split on Unicode whitespace, dropping it
//   Punctuation     {behavior}: split on punctuation code points (default Isolated)
//   Sequence        {pretokenizers: [...]}: apply in order, each to every piece
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "swarmt/core/json.h"
#include "swarmt/tokenizer/component_json.h"

namespace swarmt::tokenizer {

// One piece of text on its way to the model.
struct PreToken {
  std::string text;
  // True for the piece that begins at the very start of the input text (Metaspace's "first" scheme
  // adds its prefix only there, not after an added token).
  bool at_text_start = false;
};

class PreTokenizer {
 public:
  virtual ~PreTokenizer() = default;
  // Replaces each piece by its splits, in order; empty pieces are dropped.
  virtual void pre_tokenize(std::vector<PreToken>& pieces) const = 0;
};

std::unique_ptr<PreTokenizer> make_pre_tokenizer(const Json& json, const ComponentPath& where);

}  // namespace swarmt::tokenizer
