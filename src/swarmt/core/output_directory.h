// The directory a command writes as its output (`swarmt model init --out`, `swarmt armt init --out`).
//
// A new directory is built under a hidden temporary name beside its final one and appears under the final
// name only at commit(), complete: a command that fails or is killed half-way leaves nothing under the
// final name (an `armt init` killed mid-write used to leave a directory without armt_config.json). The
// hidden leftover of a killed writer is removed by the next command writing the same output. Two commands
// creating the same directory at once cannot both succeed: the second commit is refused (see
// AtomicDirectory::commit_as_new). An existing directory is written in place, each file atomically,
// under the directory's RunLock.
#pragma once

#include <optional>
#include <string>

#include "swarmt/core/atomic_file.h"
#include "swarmt/core/run_lock.h"

namespace swarmt {

class OutputDirectory {
 public:
  // BadInput naming `option` when `target` exists and is not a directory, or is locked by another
  // process. Nothing is visible under `target` until commit() when it does not exist yet.
  OutputDirectory(const std::string& target, const std::string& option);

  // Where to write now: the temporary directory (new output) or the target itself (existing one).
  const std::string& path() const { return fresh_ ? fresh_->path() : target_; }
  const std::string& target() const { return target_; }
  bool is_new() const { return fresh_.has_value(); }

  // Publishes a new directory under its final name; nothing to do for an existing one.
  void commit();

 private:
  std::string target_;
  std::optional<AtomicDirectory> fresh_;
  std::optional<RunLock> lock_;
};

}  // namespace swarmt
