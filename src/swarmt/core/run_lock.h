// One writer per run directory.
//
// Two `swarmt train --out RUN` started together used to both run to the end, each replacing the other's
// model, metrics and checkpoints. A command that writes a directory first takes the directory's lock: an
// advisory flock(2) on <dir>/.swarmt.lock, held for the rest of the process's life. A second writer is
// refused at once (BadInput naming the holder's pid and command), before it writes anything.
//
// The kernel drops a flock when its holder dies, however it dies, so a lock file left by a killed
// process is simply taken over; the file holds the pid and command line of its last holder only for the
// refusal message. The descriptor is close-on-exec: processes the holder starts (data-parallel workers,
// measurement children) neither inherit the lock nor wait for it. Releasing removes the lock file (while
// still holding the lock; a process that opened the old file then sees that it is gone and opens the
// new one), and the directory too when the lock created it and nothing else was written into it, so a
// refused or failed command leaves nothing behind.
#pragma once

#include <string>

namespace swarmt {

constexpr const char* kRunLockFile = ".swarmt.lock";

class RunLock {
 public:
  // Takes the lock of directory `dir`, creating `dir` (and its parents) if needed. BadInput naming
  // `option` (e.g. "--out") and `dir` when another process holds the lock, or when `dir` exists and is
  // not a directory or cannot be created.
  static RunLock acquire(const std::string& dir, const std::string& option);

  // Takes the lock file `lock_path` itself (for outputs that are files, not a directory: `data prepare`
  // locks "<dir>/.<prefix>.lock"); its directory must exist. `what` names the output in messages.
  static RunLock acquire_file(const std::string& lock_path, const std::string& what);

  RunLock(RunLock&& other) noexcept;
  RunLock& operator=(RunLock&& other) noexcept;
  RunLock(const RunLock&) = delete;
  RunLock& operator=(const RunLock&) = delete;
  ~RunLock();

  const std::string& lock_path() const { return lock_path_; }

 private:
  RunLock() = default;
  void release() noexcept;

  int fd_ = -1;
  std::string lock_path_;
  std::string created_dir_;  // the directory acquire() created, removed on release if still empty
};

}  // namespace swarmt
