#include "swarmt/core/atomic_file.h"
#include "swarmt/core/remove_tree.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "swarmt/core/error.h"
#include "swarmt/core/kill_point.h"

namespace fs = std::filesystem;

namespace swarmt {
namespace {

std::string errno_text() { return std::strerror(errno); }

std::string parent_of(const std::string& path) {
  fs::path parent = fs::path(path).parent_path();
  return parent.empty() ? std::string(".") : parent.string();
}

// fsync every regular file and directory under `root` (children first), then `root` itself.
void fsync_tree(const fs::path& root) {
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    if (entry.is_regular_file() || entry.is_directory()) fsync_path(entry.path().string());
  }
  fsync_path(root.string());
}

void remove_quietly(const std::string& path) { remove_tree(path); }

}  // namespace

void fsync_path(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  SWARMT_CHECK_INPUT(fd >= 0, path, ": cannot open to sync to disk (", errno_text(), ")");
  int rc = ::fsync(fd);
  int saved = errno;
  ::close(fd);
  // Some file systems (and /proc-like ones) do not support fsync on directories: not an error.
  SWARMT_CHECK_INPUT(rc == 0 || saved == EINVAL || saved == EROFS, path, ": fsync failed (", std::strerror(saved), ")");
}

std::string sibling_temp_path(const std::string& target, const std::string& tag) {
  static std::atomic<uint64_t> counter{0};
  fs::path p(target);
  std::string name = p.filename().string();
  if (name.empty()) name = p.parent_path().filename().string();  // "dir/" -> "dir"
  std::string temp_name = "." + name + "." + tag + "-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
  return (fs::path(parent_of(target)) / temp_name).string();
}

bool is_temp_name(const std::string& file_name) {
  return !file_name.empty() && file_name[0] == '.' &&
         (file_name.find(".tmp-") != std::string::npos || file_name.find(".old-") != std::string::npos);
}

// ------------------------------------------------------------------------------------------ files

AtomicFileWriter::AtomicFileWriter(std::string target) : target_(std::move(target)) {
  temp_path_ = sibling_temp_path(target_, "tmp");
  fd_ = ::open(temp_path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  SWARMT_CHECK_INPUT(fd_ >= 0, target_, ": cannot create a temporary file beside it (", errno_text(), ")");
}

AtomicFileWriter::~AtomicFileWriter() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_) ::unlink(temp_path_.c_str());
}

void AtomicFileWriter::write(const void* data, size_t size) {
  SWARMT_CHECK(!committed_ && fd_ >= 0, "write after commit");
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    // Linux writes at most ~2 GiB per call; loop for partial writes and EINTR.
    ssize_t n = ::write(fd_, p, std::min<size_t>(size, size_t(1) << 30));
    if (n < 0 && errno == EINTR) continue;
    SWARMT_CHECK_INPUT(n > 0, target_, ": write failed (", errno_text(), ")");
    hash_.update(p, static_cast<size_t>(n));
    p += n;
    size -= static_cast<size_t>(n);
    bytes_written_ += static_cast<uint64_t>(n);
    kill_point("atomic_file.partly_written");
  }
}

FileDigest AtomicFileWriter::commit() {
  SWARMT_CHECK(!committed_ && fd_ >= 0, "commit called twice");
  SWARMT_CHECK_INPUT(::fsync(fd_) == 0, target_, ": fsync failed (", errno_text(), ")");
  int rc = ::close(fd_);
  fd_ = -1;
  SWARMT_CHECK_INPUT(rc == 0, target_, ": close failed (", errno_text(), ")");
  kill_point("atomic_file.written_not_renamed");
  SWARMT_CHECK_INPUT(::rename(temp_path_.c_str(), target_.c_str()) == 0, target_, ": cannot rename ",
                     temp_path_, " into place (", errno_text(), ")");
  committed_ = true;
  kill_point("atomic_file.renamed_not_synced");
  fsync_path(parent_of(target_));
  return {bytes_written_, to_hex(hash_.finish())};
}

void write_file_atomically(const std::string& path, const void* data, size_t size) {
  AtomicFileWriter writer(path);
  writer.write(data, size);
  writer.commit();
}

void write_file_atomically(const std::string& path, const std::string& bytes) {
  write_file_atomically(path, bytes.data(), bytes.size());
}

// ------------------------------------------------------------------------------------ directories

AtomicDirectory::AtomicDirectory(std::string target) : target_(std::move(target)) {
  while (target_.size() > 1 && target_.back() == '/') target_.pop_back();
  temp_path_ = sibling_temp_path(target_, "tmp");
  std::error_code ec;
  fs::create_directories(parent_of(target_), ec);
  SWARMT_CHECK_INPUT(::mkdir(temp_path_.c_str(), 0755) == 0, target_,
                     ": cannot create a temporary directory beside it (", errno_text(), ")");
}

AtomicDirectory::~AtomicDirectory() {
  if (!committed_) remove_quietly(temp_path_);
}

void AtomicDirectory::commit() {
  SWARMT_CHECK(!committed_, "AtomicDirectory::commit called twice");
  fsync_tree(temp_path_);
  kill_point("atomic_directory.synced_not_renamed");
  const std::string parent = parent_of(target_);
  std::error_code ec;
  const bool replacing = fs::exists(fs::symlink_status(target_, ec));
  std::string old_path;
  if (replacing) {
    old_path = sibling_temp_path(target_, "old");
    SWARMT_CHECK_INPUT(::rename(target_.c_str(), old_path.c_str()) == 0, target_,
                       ": cannot move the existing version aside (", errno_text(), ")");
    kill_point("atomic_directory.old_moved_aside");
  }
  if (::rename(temp_path_.c_str(), target_.c_str()) != 0) {
    std::string why = errno_text();
    if (replacing) ::rename(old_path.c_str(), target_.c_str());  // put the old version back
    throw_input_error(target_, ": cannot rename ", temp_path_, " into place (", why, ")");
  }
  committed_ = true;
  kill_point("atomic_directory.renamed_not_synced");
  fsync_path(parent);
  if (replacing) remove_quietly(old_path);
}

void AtomicDirectory::commit_as_new() {
  SWARMT_CHECK(!committed_, "AtomicDirectory::commit_as_new called twice");
  fsync_tree(temp_path_);
  kill_point("atomic_directory.synced_not_renamed");
  // rename(2) replaces an empty directory, and fails on a non-empty one (ENOTEMPTY or EEXIST) and on a
  // file (ENOTDIR): the check and the rename cannot both be passed by two writers of the same target.
  std::error_code ec;
  const fs::file_status status = fs::symlink_status(target_, ec);
  bool taken = fs::exists(status) && !(fs::is_directory(status) && fs::is_empty(target_, ec));
  if (!taken && ::rename(temp_path_.c_str(), target_.c_str()) != 0) {
    const int why = errno;
    taken = why == ENOTEMPTY || why == EEXIST || why == ENOTDIR || why == EISDIR;
    SWARMT_CHECK_INPUT(taken, target_, ": cannot rename ", temp_path_, " into place (", std::strerror(why), ")");
  }
  SWARMT_CHECK_INPUT(!taken, target_, ": appeared while this command was writing it (another process wrote the same "
                     "output?); it was left as it is, and this command's output was discarded");
  committed_ = true;
  kill_point("atomic_directory.renamed_not_synced");
  fsync_path(parent_of(target_));
}

}  // namespace swarmt
