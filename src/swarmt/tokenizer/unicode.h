// Unicode data the tokenizers need: normalization forms, lowercase mapping and character classes.
//
// Why libunistring: correct NFC/NFKC needs the Unicode decomposition and composition tables (and
// canonical ordering of combining marks); a hand-written table would be thousands of lines that go
// stale with each Unicode version. libunistring (GNU, in every Linux distribution) ships those tables,
// the case mappings and the general categories, as a plain C library with no runtime data files.
// The classes below follow what the Rust `tokenizers` crate uses (Rust's char methods), so that a
// tokenizer.json behaves here as it does in Hugging Face tokenizers.
#pragma once

#include <string>
#include <string_view>

namespace swarmt::tokenizer {

enum class NormalizationForm { NFC, NFD, NFKC, NFKD };

// Applies a Unicode normalization form to valid UTF-8 text.
std::string unicode_normalize(std::string_view text, NormalizationForm form);

// Lowercases each code point independently, like Rust's char::to_lowercase (full mapping, so U+0130
// becomes "i" + U+0307; no context-dependent rules such as final sigma), which HF's Lowercase uses.
std::string unicode_lowercase(std::string_view text);

// Rust char::is_whitespace: the Unicode White_Space property.
bool is_unicode_whitespace(char32_t c);
// Rust char::is_numeric: general category Nd, Nl or No.
bool is_unicode_numeric(char32_t c);
// HF Punctuation pre-tokenizer: ASCII punctuation (which includes symbols like $ + < = > ^ ` | ~) or
// any Unicode punctuation category P*.
bool is_unicode_punctuation(char32_t c);
// Regex `\w` in Unicode mode (Rust regex crate): Alphabetic, marks, decimal digits, connector
// punctuation and Join_Control.
bool is_unicode_word_char(char32_t c);

}  // namespace swarmt::tokenizer
