#include "swarmt/core/sha256.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include <openssl/evp.h>

#include "swarmt/core/error.h"

namespace swarmt {

struct Sha256::Context {
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  ~Context() { EVP_MD_CTX_free(ctx); }
};

Sha256::Sha256() : context_(std::make_unique<Context>()) {
  SWARMT_CHECK(context_->ctx != nullptr && EVP_DigestInit_ex(context_->ctx, EVP_sha256(), nullptr) == 1,
               "sha256: libcrypto could not start a digest");
}

Sha256::~Sha256() = default;

void Sha256::update(const void* data, size_t size) {
  SWARMT_CHECK(!finished_, "sha256: update after finish");
  if (size == 0) return;
  SWARMT_CHECK(EVP_DigestUpdate(context_->ctx, data, size) == 1, "sha256: libcrypto digest update failed");
}

Sha256Digest Sha256::finish() {
  SWARMT_CHECK(!finished_, "sha256: finish called twice");
  finished_ = true;
  Sha256Digest digest;
  unsigned int length = 0;
  SWARMT_CHECK(EVP_DigestFinal_ex(context_->ctx, digest.data(), &length) == 1 && length == digest.size(),
               "sha256: libcrypto digest finish failed");
  return digest;
}

std::string to_hex(const Sha256Digest& digest) {
  static const char* kDigits = "0123456789abcdef";
  std::string out(64, '0');
  for (size_t i = 0; i < digest.size(); ++i) {
    out[2 * i] = kDigits[digest[i] >> 4];
    out[2 * i + 1] = kDigits[digest[i] & 15];
  }
  return out;
}

std::string sha256_hex(const void* data, size_t size) {
  Sha256 h;
  h.update(data, size);
  return to_hex(h.finish());
}

std::string sha256_hex(const std::string& bytes) { return sha256_hex(bytes.data(), bytes.size()); }

std::string sha256_file_hex(const std::string& path, uint64_t* bytes_read) {
  std::unique_ptr<FILE, int (*)(FILE*)> file(std::fopen(path.c_str(), "rb"), &std::fclose);
  SWARMT_CHECK_INPUT(file != nullptr, path, ": cannot open for reading (", std::strerror(errno), ")");
  Sha256 h;
  std::vector<uint8_t> chunk(1 << 20);
  uint64_t total = 0;
  for (;;) {
    size_t got = std::fread(chunk.data(), 1, chunk.size(), file.get());
    h.update(chunk.data(), got);
    total += got;
    if (got < chunk.size()) break;
  }
  SWARMT_CHECK_INPUT(!std::ferror(file.get()), path, ": read error");
  if (bytes_read) *bytes_read = total;
  return to_hex(h.finish());
}

}  // namespace swarmt
