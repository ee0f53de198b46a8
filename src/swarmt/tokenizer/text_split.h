// Patterns and split behaviours shared by normalizers, pre-tokenizers and decoders.
//
// tokenizer.json writes a pattern as {"String": "..."} (a literal) or {"Regex": "..."}. Splitting a
// text on a pattern first covers it with alternating non-match / match ranges, then a
// SplitDelimiterBehavior decides what happens to the matches (Hugging Face `normalizer.rs`, `split`):
// on "the-final--countdown" with pattern "-":
//   Removed            [the] [final] [countdown]
//   Isolated           [the] [-] [final] [-] [-] [countdown]
//   MergedWithPrevious [the-] [final-] [-] [countdown]
//   MergedWithNext     [the] [-final] [-] [-countdown]
//   Contiguous         [the] [-] [final] [--] [countdown]
// Empty pieces are always dropped.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "swarmt/core/json.h"
#include "swarmt/tokenizer/component_json.h"
#include "swarmt/tokenizer/regex.h"

namespace swarmt::tokenizer {

struct CoverRange {
  size_t begin = 0;
  size_t end = 0;
  bool is_match = false;
};

class TextPattern {
 public:
  // Reads {"String": s} or {"Regex": r}; `where` is the pattern's own path ("pre_tokenizer.pattern").
  static TextPattern from_json(const Json& json, const ComponentPath& where);
  static TextPattern literal(std::string text);

  // Appends non-overlapping matches, leftmost first. An empty literal matches nothing.
  void find_all(std::string_view text, std::vector<ByteRange>& out) const;
  // Replaces every match by `content`.
  std::string replace_all(std::string_view text, std::string_view content) const;

 private:
  std::string literal_;
  std::shared_ptr<const Regex> regex_;  // set for {"Regex": ...}
};

enum class SplitBehavior { Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous };

// Parses "Removed" | "Isolated" | "MergedWithPrevious" | "MergedWithNext" | "Contiguous".
SplitBehavior parse_split_behavior(const std::string& name, const std::string& describe);

// Covers [0, text_size) with the given sorted, non-overlapping matches and the gaps between them;
// `invert` swaps which ranges count as matches. Empty matches are kept (they vanish in the split).
std::vector<CoverRange> cover_with_matches(size_t text_size, const std::vector<ByteRange>& matches, bool invert);

// One match per code point for which `predicate` holds (how HF splits on a char class).
std::vector<ByteRange> find_code_points(std::string_view text, const std::function<bool(char32_t)>& predicate);

// The pieces of a covered text under `behavior`, as byte ranges; empty pieces are dropped.
std::vector<ByteRange> split_by_behavior(const std::vector<CoverRange>& cover, SplitBehavior behavior);

}  // namespace swarmt::tokenizer
