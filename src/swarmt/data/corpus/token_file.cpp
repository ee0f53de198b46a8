#include "swarmt/data/corpus/token_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "swarmt/core/error.h"

namespace swarmt::data {
namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string strip_extension(const std::string& path) {
  if (ends_with(path, ".json")) return path.substr(0, path.size() - 5);
  if (ends_with(path, ".tokens")) return path.substr(0, path.size() - 7);
  return path;
}

void write_all(int fd, const void* data, size_t size, const std::string& path) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = ::write(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    SWARMT_CHECK_INPUT(n > 0, path, ": write failed: ", std::strerror(errno));
    p += n;
    size -= static_cast<size_t>(n);
  }
}

}  // namespace

std::string token_sidecar_path(const std::string& path) { return strip_extension(path) + ".json"; }
std::string token_data_path(const std::string& path) { return strip_extension(path) + ".tokens"; }

TokenFile TokenFile::open(const std::string& path) {
  TokenFile f;
  const std::string sidecar = token_sidecar_path(path);
  f.tokens_path_ = token_data_path(path);
  Json meta = read_json_file(sidecar);
  JsonView v(meta, sidecar);
  SWARMT_CHECK_INPUT(v.get_string("format", "") == "swarmt-tokens", v.describe("format"),
                     " must be \"swarmt-tokens\" (is this a token file sidecar?)");
  SWARMT_CHECK_INPUT(v.get_int("version", 0) == 1, v.describe("version"), " must be 1 (written by a newer swarmt?)");
  SWARMT_CHECK_INPUT(v.get_string("dtype", "") == "uint32", v.describe("dtype"), " must be \"uint32\"");
  f.num_tokens_ = v.get_int_in("num_tokens", 0, int64_t{1} << 50);
  f.vocab_size_ = v.get_int_in("vocab_size", 1, int64_t{1} << 32);
  if (v.has("tokenizer")) f.tokenizer_ = v.raw("tokenizer");
  f.offsets_ = v.get_int_list("document_offsets");
  SWARMT_CHECK_INPUT(!f.offsets_.empty() && f.offsets_.front() == 0, v.describe("document_offsets"),
                     " must start with 0");
  SWARMT_CHECK_INPUT(f.offsets_.back() == f.num_tokens_, v.describe("document_offsets"), " must end with num_tokens (",
                     f.num_tokens_, "), got ", f.offsets_.back());
  for (size_t i = 1; i < f.offsets_.size(); ++i)
    SWARMT_CHECK_INPUT(f.offsets_[i] > f.offsets_[i - 1], v.describe("document_offsets"), " must increase strictly (entry ",
                       i, " is ", f.offsets_[i], " after ", f.offsets_[i - 1], ")");

  int fd = ::open(f.tokens_path_.c_str(), O_RDONLY | O_CLOEXEC);
  SWARMT_CHECK_INPUT(fd >= 0, f.tokens_path_, ": cannot open: ", std::strerror(errno));
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    ::close(fd);
    throw_input_error(f.tokens_path_, ": cannot stat: ", std::strerror(errno));
  }
  const int64_t expected = f.num_tokens_ * 4;
  if (st.st_size != expected) {
    ::close(fd);
    throw_input_error(f.tokens_path_, ": file has ", st.st_size, " bytes but ", sidecar, " declares ", f.num_tokens_,
                      " tokens (", expected, " bytes); the file is truncated or does not belong to this sidecar");
  }
  if (expected > 0) {
    void* addr = mmap(nullptr, static_cast<size_t>(expected), PROT_READ, MAP_PRIVATE, fd, 0);
    ::close(fd);
    SWARMT_CHECK_INPUT(addr != MAP_FAILED, f.tokens_path_, ": mmap failed: ", std::strerror(errno));
    size_t len = static_cast<size_t>(expected);
    f.mapping_ = std::shared_ptr<void>(addr, [len](void* p) { munmap(p, len); });
    f.data_ = static_cast<const uint32_t*>(addr);
  } else {
    ::close(fd);
  }
  return f;
}

int64_t TokenFile::document_of(int64_t i) const {
  auto it = std::upper_bound(offsets_.begin(), offsets_.end(), i);
  return static_cast<int64_t>(it - offsets_.begin()) - 1;
}

void TokenFile::validate_tokens() const {
  for (int64_t i = 0; i < num_tokens_; ++i)
    SWARMT_CHECK_INPUT(static_cast<int64_t>(data_[i]) < vocab_size_, tokens_path_, ": the token at offset ", i,
                       " (byte ", 4 * i, ") is ", data_[i], ", outside the vocabulary of ", vocab_size_,
                       " ids (vocab_size in ", token_sidecar_path(tokens_path_), ")");
}

TokenFileWriter::TokenFileWriter(const std::string& prefix, int64_t vocab_size, Json tokenizer_info)
    : prefix_(strip_extension(prefix)), vocab_size_(vocab_size), tokenizer_(std::move(tokenizer_info)) {
  tmp_tokens_ = prefix_ + ".tokens.tmp-" + std::to_string(getpid());
  fd_ = ::open(tmp_tokens_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  SWARMT_CHECK_INPUT(fd_ >= 0, tmp_tokens_, ": cannot create: ", std::strerror(errno));
}

TokenFileWriter::~TokenFileWriter() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_) std::remove(tmp_tokens_.c_str());
}

void TokenFileWriter::add_document(const std::vector<int32_t>& tokens) {
  SWARMT_CHECK(!committed_, "token file already committed");
  if (tokens.empty()) return;
  std::vector<uint32_t> buffer(tokens.size());
  for (size_t i = 0; i < tokens.size(); ++i) {
    SWARMT_CHECK(tokens[i] >= 0 && tokens[i] < vocab_size_, "token id out of the vocabulary");
    buffer[i] = static_cast<uint32_t>(tokens[i]);
  }
  write_all(fd_, buffer.data(), buffer.size() * sizeof(uint32_t), tmp_tokens_);
  num_tokens_ += static_cast<int64_t>(tokens.size());
  offsets_.push_back(num_tokens_);
}

void TokenFileWriter::commit() {
  SWARMT_CHECK(!committed_, "token file already committed");
  SWARMT_CHECK_INPUT(::fsync(fd_) == 0, tmp_tokens_, ": fsync failed: ", std::strerror(errno));
  ::close(fd_);
  fd_ = -1;
  Json meta{{"format", "swarmt-tokens"}, {"version", 1},           {"dtype", "uint32"},
            {"num_tokens", num_tokens_}, {"vocab_size", vocab_size_}, {"tokenizer", tokenizer_},
            {"document_offsets", offsets_}};
  const std::string tokens_path = prefix_ + ".tokens", sidecar = prefix_ + ".json";
  const std::string tmp_sidecar = sidecar + ".tmp-" + std::to_string(getpid());
  try {
    int fd = ::open(tmp_sidecar.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    SWARMT_CHECK_INPUT(fd >= 0, tmp_sidecar, ": cannot create: ", std::strerror(errno));
    std::string text = meta.dump() + "\n";
    try {
      write_all(fd, text.data(), text.size(), tmp_sidecar);
    } catch (...) {
      ::close(fd);
      throw;
    }
    ::fsync(fd);
    ::close(fd);
    // Data first, sidecar last: a reader never sees a sidecar whose data file is missing or stale, because
    // the size check ties the two together.
    SWARMT_CHECK_INPUT(std::rename(tmp_tokens_.c_str(), tokens_path.c_str()) == 0, tokens_path, ": rename failed: ",
                       std::strerror(errno));
    SWARMT_CHECK_INPUT(std::rename(tmp_sidecar.c_str(), sidecar.c_str()) == 0, sidecar, ": rename failed: ",
                       std::strerror(errno));
  } catch (...) {
    std::remove(tmp_sidecar.c_str());  // a failed commit leaves no temporary file (the destructor removes the data)
    throw;
  }
  committed_ = true;
}

}  // namespace swarmt::data
