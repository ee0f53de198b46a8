// SHA-256 (FIPS 180-4) of byte ranges and files, used to verify checkpoint files against their manifest.
//
// Streaming: feed any number of update() calls, then finish(). Files are hashed in 1 MiB chunks, so a
// multi-gigabyte optimizer state never has to fit in memory.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace swarmt {

using Sha256Digest = std::array<uint8_t, 32>;

class Sha256 {
 public:
  Sha256();
  void update(const void* data, size_t size);
  void update(const std::string& bytes) { update(bytes.data(), bytes.size()); }
  // Pads, finishes and returns the digest; the object must not be updated afterwards.
  Sha256Digest finish();

 private:
  void compress(const uint8_t* block);  // one 64-byte block into state_
  std::array<uint32_t, 8> state_;
  std::array<uint8_t, 64> buffer_;
  size_t buffered_ = 0;       // bytes waiting in buffer_
  uint64_t total_bytes_ = 0;  // message length so far
  bool finished_ = false;
};

// Lower-case hexadecimal, 64 characters.
std::string to_hex(const Sha256Digest& digest);

std::string sha256_hex(const void* data, size_t size);
std::string sha256_hex(const std::string& bytes);

// Hash of a whole file; BadInput naming the path if it cannot be read. If `bytes_read` is given it
// receives the file size.
std::string sha256_file_hex(const std::string& path, uint64_t* bytes_read = nullptr);

}  // namespace swarmt
