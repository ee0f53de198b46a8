// Unicode regular expressions for tokenizer.json patterns, on PCRE2.
//
// Hugging Face pre-tokenizer patterns use \p{L}, \p{N}, lookahead (\s+(?!\S)) and inline flags
// ((?i:'s|'t)), none of which std::regex supports. PCRE2 in UTF + UCP mode matches them with Unicode
// semantics (\s, \w, \d and case folding over all of Unicode), close to the Oniguruma engine the Rust
// tokenizers crate uses. One known difference: PCRE2's \s also matches U+180E (MONGOLIAN VOWEL
// SEPARATOR), which Oniguruma no longer treats as a space.
//
// A Regex is compiled once (JIT-compiled when available) and is safe to use from several threads at
// once: per-thread match data and JIT stacks live in thread-local storage.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace swarmt::tokenizer {

using ByteRange = std::pair<size_t, size_t>;  // [begin, end) in bytes

class Regex {
 public:
  // Compiles `pattern`; a syntax error throws BadInput naming `what` (e.g. "tokenizer.json: field
  // 'pre_tokenizer.pattern.Regex'") with PCRE2's message and the offset in the pattern.
  Regex(const std::string& pattern, const std::string& what);

  // Appends the non-overlapping matches in `text` (valid UTF-8), leftmost first. After an empty match
  // the search resumes at the same place but refuses another empty match there.
  void find_all(std::string_view text, std::vector<ByteRange>& out) const;

  const std::string& pattern() const { return pattern_; }

 private:
  struct Compiled;
  std::shared_ptr<const Compiled> compiled_;
  std::string pattern_;
  std::string what_;
};

}  // namespace swarmt::tokenizer
