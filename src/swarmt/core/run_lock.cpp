#include "swarmt/core/run_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "swarmt/core/error.h"

namespace fs = std::filesystem;

namespace swarmt {
namespace {

// "swarmt train --config t.json --out run": what the refusal shows of the holder (at most 300 bytes).
std::string own_command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  std::string line = bytes.str();
  while (!line.empty() && line.back() == '\0') line.pop_back();
  for (char& c : line)
    if (c == '\0' || c == '\n') c = ' ';
  if (line.size() > 300) line = line.substr(0, 297) + "...";
  return line;
}

// The lock file holds "<pid>\n<command line>\n"; this renders "pid 1234: swarmt train ...".
std::string describe_holder(int fd) {
  char buffer[512];
  const ssize_t n = ::pread(fd, buffer, sizeof(buffer) - 1, 0);
  if (n <= 0) return "pid not yet recorded";
  std::string text(buffer, static_cast<size_t>(n));
  const auto newline = text.find('\n');
  const std::string pid = text.substr(0, newline);
  std::string command = newline == std::string::npos ? "" : text.substr(newline + 1);
  while (!command.empty() && command.back() == '\n') command.pop_back();
  return command.empty() ? "pid " + pid : "pid " + pid + ": " + command;
}

bool same_file(int fd, const std::string& path) {
  struct stat held {}, named {};
  return ::fstat(fd, &held) == 0 && ::stat(path.c_str(), &named) == 0 && held.st_dev == named.st_dev &&
         held.st_ino == named.st_ino;
}

}  // namespace

RunLock RunLock::acquire_file(const std::string& lock_path, const std::string& what) {
  // A holder that releases unlinks the file while still holding it: a process that opened the old file
  // gets its lock afterwards, finds that the name now leads elsewhere (or nowhere), and tries again.
  for (int attempt = 0; attempt < 1000; ++attempt) {
    const int fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    SWARMT_CHECK_INPUT(fd >= 0, what, ": cannot create the lock file ", lock_path, " (", std::strerror(errno), ")");
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const int why = errno;
      if (why == EINTR) {
        ::close(fd);
        continue;
      }
      const std::string holder = why == EWOULDBLOCK ? describe_holder(fd) : "";
      ::close(fd);
      SWARMT_CHECK_INPUT(why != EWOULDBLOCK, what, " is being written by another swarmt process (", holder,
                         "); wait for it to finish, or choose another output (lock: ", lock_path, ")");
      throw_input_error(what, ": cannot lock ", lock_path, " (", std::strerror(why), ")");
    }
    if (!same_file(fd, lock_path)) {
      ::close(fd);
      continue;
    }
    const std::string record = std::to_string(::getpid()) + "\n" + own_command_line() + "\n";
    // Only for the message of a refused process: a failure to record is not worth failing the command.
    if (::ftruncate(fd, 0) == 0) {
      [[maybe_unused]] const ssize_t written = ::pwrite(fd, record.data(), record.size(), 0);
    }
    RunLock lock;
    lock.fd_ = fd;
    lock.lock_path_ = lock_path;
    return lock;
  }
  throw_internal_error(lock_path, ": the lock file kept being replaced while taking it");
}

RunLock RunLock::acquire(const std::string& dir, const std::string& option) {
  const std::string what = option.empty() ? dir : option + " " + dir;
  std::error_code ec;
  const fs::file_status status = fs::status(dir, ec);
  SWARMT_CHECK_INPUT(!ec || ec == std::errc::no_such_file_or_directory, what, ": cannot access (", ec.message(), ")");
  SWARMT_CHECK_INPUT(!fs::exists(status) || fs::is_directory(status), what, ": exists and is not a directory");
  std::string created;
  if (!fs::exists(status)) {
    fs::create_directories(dir, ec);
    SWARMT_CHECK_INPUT(!ec && fs::is_directory(dir, ec), what, ": cannot create the directory (", ec.message(), ")");
    created = dir;
  }
  try {
    RunLock lock = acquire_file((fs::path(dir) / kRunLockFile).string(), what);
    lock.created_dir_ = created;
    return lock;
  } catch (...) {
    if (!created.empty()) ::rmdir(created.c_str());
    throw;
  }
}

RunLock::RunLock(RunLock&& other) noexcept
    : fd_(other.fd_), lock_path_(std::move(other.lock_path_)), created_dir_(std::move(other.created_dir_)) {
  other.fd_ = -1;
}

RunLock& RunLock::operator=(RunLock&& other) noexcept {
  if (this != &other) {
    release();
    fd_ = other.fd_;
    lock_path_ = std::move(other.lock_path_);
    created_dir_ = std::move(other.created_dir_);
    other.fd_ = -1;
  }
  return *this;
}

RunLock::~RunLock() { release(); }

void RunLock::release() noexcept {
  if (fd_ < 0) return;
  ::unlink(lock_path_.c_str());  // while still holding the lock (see acquire_file)
  ::close(fd_);
  fd_ = -1;
  if (!created_dir_.empty()) ::rmdir(created_dir_.c_str());  // fails, as it should, unless empty
}

}  // namespace swarmt
