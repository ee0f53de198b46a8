// UTF-8 mechanics for the tokenizers: walking code points, validating input, and the lossy decoding
// that Hugging Face decoders apply to byte sequences.
//
// Text inside swarmt is std::string holding UTF-8. Encoding requires valid UTF-8 (validate_utf8 names the
// first bad byte); decoding turns arbitrary bytes back into valid UTF-8 with U+FFFD replacement.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace swarmt::tokenizer {

// U+FFFD REPLACEMENT CHARACTER, as UTF-8.
inline constexpr std::string_view kReplacementChar = "\xEF\xBF\xBD";

// Length in bytes of the UTF-8 sequence that starts with `lead`, assuming valid UTF-8 (1 for stray bytes).
inline size_t utf8_sequence_length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if ((lead & 0xE0) == 0xC0) return 2;
  if ((lead & 0xF0) == 0xE0) return 3;
  if ((lead & 0xF8) == 0xF0) return 4;
  return 1;
}

// Decodes the code point at text[pos] (valid UTF-8 assumed) and advances pos past it.
char32_t next_code_point(std::string_view text, size_t& pos);

// Appends the UTF-8 encoding of `cp` to `out`.
void append_utf8(char32_t cp, std::string& out);
std::string utf8_of(char32_t cp);

// Byte offset of the first invalid byte, or nullopt if `text` is valid UTF-8 (no overlongs, no
// surrogates, nothing above U+10FFFF).
std::optional<size_t> find_invalid_utf8(std::string_view text);

// Throws BadInput "<what> is not valid UTF-8 (bad byte 0x.. at byte offset N)" if `text` is invalid.
void require_valid_utf8(std::string_view text, const std::string& what);

// Decodes bytes as UTF-8, replacing each maximal invalid subsequence by one U+FFFD (the Unicode
// "substitution of maximal subparts" practice, as Rust's String::from_utf8_lossy does). The result is
// valid UTF-8; valid input is returned unchanged.
std::string utf8_lossy(std::string_view bytes);

// Number of bytes at the end of `bytes` that form an incomplete (but so far valid) UTF-8 sequence,
// i.e. bytes a streaming decoder should hold back until more arrive. 0 when the text ends cleanly.
size_t incomplete_utf8_suffix(std::string_view bytes);

// Number of code points in valid UTF-8 text.
size_t count_code_points(std::string_view text);

}  // namespace swarmt::tokenizer
