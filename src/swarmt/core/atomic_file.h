// Writing files and directories so that readers see either the old content or the complete new one,
// never a half-written file, even if the process is killed or the machine loses power mid-write.
//
// The recipe (POSIX): write to a temporary name in the same directory (same file system, so rename is
// atomic), fsync the data, rename over the target, then fsync the directory so the rename itself is
// durable. Temporary names start with '.' and contain ".tmp-", so listings of checkpoints and model
// files never mistake them for the real thing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "swarmt/core/sha256.h"

namespace swarmt {

// Flushes a file's data (or a directory's entries) to stable storage; BadInput naming the path on failure.
void fsync_path(const std::string& path);

// A unique hidden name beside `target`: "<dir>/.<name>.<tag>-<pid>-<counter>".
std::string sibling_temp_path(const std::string& target, const std::string& tag);

// True for names created by sibling_temp_path (so listings can skip them).
bool is_temp_name(const std::string& file_name);

// Streams bytes into a temporary file beside `target`; commit() fsyncs it and renames it into place.
// Destroying the writer without commit() removes the temporary file and leaves `target` untouched.
// The SHA-256 of the bytes is computed as they are written (checkpoint manifests record it without
// reading the file again).
class AtomicFileWriter {
 public:
  explicit AtomicFileWriter(std::string target);
  ~AtomicFileWriter();
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;

  void write(const void* data, size_t size);
  void write(const std::string& bytes) { write(bytes.data(), bytes.size()); }
  uint64_t bytes_written() const { return bytes_written_; }
  // Renames the file into place and returns what was written: its size and SHA-256.
  FileDigest commit();

  const std::string& target() const { return target_; }
  const std::string& temp_path() const { return temp_path_; }

 private:
  std::string target_;
  std::string temp_path_;
  int fd_ = -1;
  uint64_t bytes_written_ = 0;
  Sha256 hash_;
  bool committed_ = false;
};

// Writes a whole file atomically (see AtomicFileWriter).
void write_file_atomically(const std::string& path, const void* data, size_t size);
void write_file_atomically(const std::string& path, const std::string& bytes);

// Builds a directory under a temporary name beside `target`; commit() fsyncs every file in it and moves
// it into place. An existing `target` is replaced safely: it is renamed away, the new one is renamed in,
// and only then is the old one removed (if the second rename fails, the old one is put back). Destroying
// the object without commit() removes the temporary directory.
class AtomicDirectory {
 public:
  explicit AtomicDirectory(std::string target);
  ~AtomicDirectory();
  AtomicDirectory(const AtomicDirectory&) = delete;
  AtomicDirectory& operator=(const AtomicDirectory&) = delete;

  // Where to write now (the temporary directory), and a file inside it.
  const std::string& path() const { return temp_path_; }
  std::string file(const std::string& name) const { return temp_path_ + "/" + name; }
  const std::string& target() const { return target_; }

  void commit();
  // Like commit(), but never replaces anything: when something appeared under the target name since
  // (another process wrote the same output), BadInput naming the target; that output is left as it is
  // and the temporary directory is removed. An empty directory under the target name is replaced.
  void commit_as_new();
  bool committed() const { return committed_; }

 private:
  std::string target_;
  std::string temp_path_;
  bool committed_ = false;
};

}  // namespace swarmt
