#include "swarmt/tokenizer/utf8.h"

#include <unistr.h>

#include <cstdio>

#include "swarmt/core/error.h"

namespace swarmt::tokenizer {

// Code point walking, encoding, validation and counting are libunistring's (unistr.h); the lossy decoder
// and the streaming suffix below need the maximal-subpart rule, which it does not offer.

char32_t next_code_point(std::string_view text, size_t& pos) {
  ucs4_t cp = 0;
  const auto* at = reinterpret_cast<const uint8_t*>(text.data() + pos);
  // Valid input is assumed; an invalid or truncated sequence gives U+FFFD and consumes at least a byte.
  const int length = u8_mbtouc(&cp, at, text.size() - pos);
  pos += static_cast<size_t>(length > 0 ? length : 1);
  return static_cast<char32_t>(cp);
}

void append_utf8(char32_t cp, std::string& out) {
  uint8_t encoded[6];
  const int length = u8_uctomb(encoded, static_cast<ucs4_t>(cp), sizeof(encoded));
  SWARMT_CHECK(length > 0, "append_utf8: U+", static_cast<uint32_t>(cp), " cannot be encoded as UTF-8");
  out.append(reinterpret_cast<const char*>(encoded), static_cast<size_t>(length));
}

std::string utf8_of(char32_t cp) {
  std::string s;
  append_utf8(cp, s);
  return s;
}

namespace {

// How many bytes of a well-formed sequence start at bytes[pos] (>= 1 when complete and valid), or the
// negated length of the longest valid-but-incomplete prefix ("maximal subpart") when it is not.
// Valid second-byte ranges follow Unicode Table 3-7 (excludes overlongs, surrogates, > U+10FFFF).
int well_formed_length(std::string_view bytes, size_t pos) {
  auto b = [&](size_t i) { return static_cast<unsigned char>(bytes[i]); };
  unsigned char lead = b(pos);
  if (lead < 0x80) return 1;
  int need;
  unsigned char lo = 0x80, hi = 0xBF;  // range of the second byte
  if (lead >= 0xC2 && lead <= 0xDF) {
    need = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    need = 3;
    if (lead == 0xE0) lo = 0xA0;
    if (lead == 0xED) hi = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    need = 4;
    if (lead == 0xF0) lo = 0x90;
    if (lead == 0xF4) hi = 0x8F;
  } else {
    return -1;  // never a lead byte: a subpart of length 1
  }
  int have = 1;
  for (; have < need; ++have) {
    if (pos + have >= bytes.size()) return -have;
    unsigned char c = b(pos + have);
    bool ok = have == 1 ? (c >= lo && c <= hi) : (c >= 0x80 && c <= 0xBF);
    if (!ok) return -have;
  }
  return need;
}

}  // namespace

std::optional<size_t> find_invalid_utf8(std::string_view text) {
  const auto* begin = reinterpret_cast<const uint8_t*>(text.data());
  const uint8_t* bad = u8_check(begin, text.size());
  if (bad == nullptr) return std::nullopt;
  return static_cast<size_t>(bad - begin);
}

void require_valid_utf8(std::string_view text, const std::string& what) {
  if (auto bad = find_invalid_utf8(text)) {
    char hex[8];
    std::snprintf(hex, sizeof(hex), "0x%02X", static_cast<unsigned char>(text[*bad]));
    throw_input_error(what, " is not valid UTF-8 (bad byte ", hex, " at byte offset ", *bad, ")");
  }
}

std::string utf8_lossy(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  size_t pos = 0;
  while (pos < bytes.size()) {
    int len = well_formed_length(bytes, pos);
    if (len > 0) {
      out.append(bytes.data() + pos, static_cast<size_t>(len));
      pos += static_cast<size_t>(len);
    } else {
      out.append(kReplacementChar);
      pos += static_cast<size_t>(-len);
    }
  }
  return out;
}

size_t incomplete_utf8_suffix(std::string_view bytes) {
  // A sequence is at most 4 bytes, so only a lead byte among the last 3 can start an incomplete one.
  size_t n = bytes.size();
  for (size_t back = 1; back <= 3 && back <= n; ++back) {
    size_t pos = n - back;
    unsigned char c = static_cast<unsigned char>(bytes[pos]);
    if ((c & 0xC0) == 0x80) continue;  // continuation byte: keep looking for its lead
    int len = well_formed_length(bytes, pos);
    // Incomplete only if the prefix ran into the end of the text (not into a bad byte).
    if (len < 0 && pos + static_cast<size_t>(-len) == n && utf8_sequence_length(c) > back) return back;
    return 0;
  }
  return 0;
}

size_t count_code_points(std::string_view text) {
  return u8_mbsnlen(reinterpret_cast<const uint8_t*>(text.data()), text.size());
}

}  // namespace swarmt::tokenizer
