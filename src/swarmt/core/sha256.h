// SHA-256 of byte ranges and files (OpenSSL's libcrypto), used to verify checkpoint files against their
// manifest.
//
// Streaming: feed any number of update() calls, then finish(). Files are hashed in 1 MiB chunks, so a
// multi-gigabyte optimizer state never has to fit in memory.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace swarmt {

using Sha256Digest = std::array<uint8_t, 32>;

class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  void update(const void* data, size_t size);
  void update(const std::string& bytes) { update(bytes.data(), bytes.size()); }
  // Returns the digest; the object must not be updated afterwards.
  Sha256Digest finish();

 private:
  struct Context;  // libcrypto's digest context, kept out of this header
  std::unique_ptr<Context> context_;
  bool finished_ = false;
};

// What a writer wrote: the size and the SHA-256 (lower-case hex) of a file.
struct FileDigest {
  uint64_t bytes = 0;
  std::string sha256;
};

// Lower-case hexadecimal, 64 characters.
std::string to_hex(const Sha256Digest& digest);

std::string sha256_hex(const void* data, size_t size);
std::string sha256_hex(const std::string& bytes);

// Hash of a whole file; BadInput naming the path if it cannot be read. If `bytes_read` is given it
// receives the file size.
std::string sha256_file_hex(const std::string& path, uint64_t* bytes_read = nullptr);

}  // namespace swarmt
