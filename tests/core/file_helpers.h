// Byte-level helpers of the file-format tests: little-endian integers, the reference safetensors layout,
// reading a file whole, listing a directory.
#pragma once

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace swarmt::testing {

inline std::string le64(uint64_t n) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  return out;
}

// A file laid out as the reference Python writer lays it out: u64 LE header length, the JSON header
// padded with spaces to a multiple of 8, then the data.
inline std::string reference_layout(std::string json, const std::string& data) {
  json.append((8 - json.size() % 8) % 8, ' ');
  return le64(json.size()) + json + data;
}

inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// File names in `dir`, sorted.
inline std::vector<std::string> entries_of(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace swarmt::testing
