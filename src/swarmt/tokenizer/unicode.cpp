#include "swarmt/tokenizer/unicode.h"

#include <unicase.h>
#include <unictype.h>
#include <uninorm.h>

#include <cstdlib>
#include <memory>

#include "swarmt/core/error.h"
#include "swarmt/tokenizer/utf8.h"

namespace swarmt::tokenizer {

std::string unicode_normalize(std::string_view text, NormalizationForm form) {
  if (text.empty()) return std::string();
  // Pure ASCII is invariant under every normalization form: skip the library call (the common case).
  bool ascii = true;
  for (char c : text) ascii = ascii && static_cast<unsigned char>(c) < 0x80;
  if (ascii) return std::string(text);

  uninorm_t nf = UNINORM_NFC;
  switch (form) {
    case NormalizationForm::NFC:
      nf = UNINORM_NFC;
      break;
    case NormalizationForm::NFD:
      nf = UNINORM_NFD;
      break;
    case NormalizationForm::NFKC:
      nf = UNINORM_NFKC;
      break;
    case NormalizationForm::NFKD:
      nf = UNINORM_NFKD;
      break;
  }
  size_t length = 0;
  uint8_t* result = u8_normalize(nf, reinterpret_cast<const uint8_t*>(text.data()), text.size(),
                                 /*resultbuf=*/nullptr, &length);
  SWARMT_CHECK(result != nullptr, "u8_normalize failed (invalid UTF-8 or out of memory)");
  std::unique_ptr<uint8_t, decltype(&std::free)> owned(result, &std::free);
  return std::string(reinterpret_cast<const char*>(result), length);
}

std::string unicode_lowercase(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t pos = 0;
  while (pos < text.size()) {
    unsigned char lead = static_cast<unsigned char>(text[pos]);
    if (lead < 0x80) {
      out.push_back(static_cast<char>(lead >= 'A' && lead <= 'Z' ? lead + 32 : lead));
      ++pos;
      continue;
    }
    char32_t c = next_code_point(text, pos);
    // U+0130 (capital I with dot above) is the one code point whose full lowercase mapping is two
    // code points in SpecialCasing.txt without conditions; every other mapping is the simple one.
    if (c == 0x130) {
      out.push_back('i');
      append_utf8(0x307, out);
    } else {
      append_utf8(uc_tolower(c), out);
    }
  }
  return out;
}

bool is_unicode_whitespace(char32_t c) {
  if (c < 0x80) return c == ' ' || (c >= 0x09 && c <= 0x0D);
  return uc_is_property_white_space(c);
}

bool is_unicode_numeric(char32_t c) {
  if (c < 0x80) return c >= '0' && c <= '9';
  return uc_is_general_category(c, UC_CATEGORY_N);
}

bool is_unicode_punctuation(char32_t c) {
  if (c < 0x80)
    return (c >= 0x21 && c <= 0x2F) || (c >= 0x3A && c <= 0x40) || (c >= 0x5B && c <= 0x60) || (c >= 0x7B && c <= 0x7E);
  return uc_is_general_category(c, UC_CATEGORY_P);
}

bool is_unicode_word_char(char32_t c) {
  if (c < 0x80) return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  return uc_is_property_alphabetic(c) || uc_is_general_category(c, UC_CATEGORY_M) ||
         uc_is_general_category(c, UC_CATEGORY_Nd) || uc_is_general_category(c, UC_CATEGORY_Pc) ||
         uc_is_property_join_control(c);
}

}  // namespace swarmt::tokenizer
