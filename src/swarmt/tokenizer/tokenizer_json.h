// Reading tokenizer.json quickly.
//
// Gemma 3's tokenizer.json is 33 MB: 262k vocab entries and 515k merges. Building a full JSON DOM of it
// (std::map per object, a node per string) takes ~3 s; streaming the file through a SAX parser takes
// ~0.3 s. So the reader streams model.vocab and model.merges straight into flat vectors (moving the
// strings, no copies) and builds an ordinary DOM only for the small remainder (normalizer,
// pre_tokenizer, added_tokens, ...), which the component loaders then read with JsonView.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "swarmt/core/json.h"

namespace swarmt::tokenizer {

struct TokenizerJsonDocument {
  // The whole document except what was streamed: if model.vocab was an object (and model.merges a
  // list) they are absent from `root.model` and present in the vectors below instead.
  Json root;
  bool vocab_streamed = false;
  std::vector<std::pair<std::string, int64_t>> vocab;  // (token, id) in file order
  bool merges_streamed = false;
  std::vector<std::pair<std::string, std::string>> merges;  // (left, right) in rank order
};

// Parses tokenizer.json text. BadInput naming `source` for malformed JSON (with the byte position),
// a vocab id that is not a non-negative integer, or a merge that is neither ["a", "b"] nor "a b".
TokenizerJsonDocument parse_tokenizer_json(const std::string& text, const std::string& source);

}  // namespace swarmt::tokenizer
