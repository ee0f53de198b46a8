#include "swarmt/tokenizer/byte_level.h"

#include "swarmt/tokenizer/utf8.h"

namespace swarmt::tokenizer {

namespace {

bool stands_for_itself(int byte) {
  return (byte >= '!' && byte <= '~') || (byte >= 0xA1 && byte <= 0xAC) || (byte >= 0xAE && byte <= 0xFF);
}

struct ByteLevelTables {
  std::array<std::string, 256> alphabet;
  std::array<int, 324> byte_of_code_point;  // code points used are < 256 + 68; -1 if unused
  ByteLevelTables() {
    byte_of_code_point.fill(-1);
    int next_extra = 0;
    for (int byte = 0; byte < 256; ++byte) {
      char32_t cp = stands_for_itself(byte) ? static_cast<char32_t>(byte) : static_cast<char32_t>(256 + next_extra++);
      alphabet[byte] = utf8_of(cp);
      byte_of_code_point[cp] = byte;
    }
  }
};

const ByteLevelTables& tables() {
  static const ByteLevelTables instance;
  return instance;
}

}  // namespace

const std::array<std::string, 256>& byte_level_alphabet() { return tables().alphabet; }

std::string byte_level_encode(std::string_view bytes) {
  const auto& alphabet = tables().alphabet;
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char c : bytes) out.append(alphabet[static_cast<unsigned char>(c)]);
  return out;
}

bool byte_level_decode_token(std::string_view token, std::string& bytes) {
  const auto& table = tables().byte_of_code_point;
  size_t start = bytes.size();
  size_t pos = 0;
  while (pos < token.size()) {
    char32_t cp = next_code_point(token, pos);
    if (cp >= table.size() || table[cp] < 0) {
      bytes.resize(start);
      return false;
    }
    bytes.push_back(static_cast<char>(table[cp]));
  }
  return true;
}

}  // namespace swarmt::tokenizer
