#include "swarmt/core/output_directory.h"

#include <filesystem>

#include "swarmt/core/dead_writers.h"
#include "swarmt/core/error.h"

namespace fs = std::filesystem;

namespace swarmt {

OutputDirectory::OutputDirectory(const std::string& target, const std::string& option) : target_(target) {
  while (target_.size() > 1 && target_.back() == '/') target_.pop_back();
  const std::string what = option.empty() ? target_ : option + " " + target_;
  SWARMT_CHECK_INPUT(!target_.empty(), option, ": the output directory name is empty");
  std::error_code ec;
  const fs::file_status status = fs::status(target_, ec);
  SWARMT_CHECK_INPUT(!ec || ec == std::errc::no_such_file_or_directory, what, ": cannot access (", ec.message(), ")");
  SWARMT_CHECK_INPUT(fs::exists(status) || !fs::exists(fs::symlink_status(target_, ec)), what,
                     ": is a symbolic link to nothing; remove it or choose another directory");
  if (fs::exists(status)) {
    SWARMT_CHECK_INPUT(fs::is_directory(status), what, ": exists and is not a directory");
    lock_.emplace(RunLock::acquire(target_, option));
    return;
  }
  fs::path parent = fs::path(target_).parent_path();
  if (parent.empty()) parent = ".";
  const std::string name = fs::path(target_).filename().string();
  // Hidden directories ".<name>.tmp-<pid>-<n>" of writers of this output that were killed.
  if (fs::is_directory(parent, ec)) remove_leftovers_of_dead_writers(parent.string(), {"." + name + ".tmp-"});
  fresh_.emplace(target_);
}

void OutputDirectory::commit() {
  if (fresh_) fresh_->commit_as_new();
}

}  // namespace swarmt
