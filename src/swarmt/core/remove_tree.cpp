#include "swarmt/core/remove_tree.h"

#include <ftw.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>

namespace swarmt {
namespace {

// Called children first (FTW_DEPTH): each entry is empty by the time it is removed.
int remove_entry(const char* path, const struct stat*, int, struct FTW*) {
  return std::remove(path) == 0 || errno == ENOENT ? 0 : -1;
}

}  // namespace

bool remove_tree(const std::string& path) noexcept {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) return errno == ENOENT;
  if (!S_ISDIR(st.st_mode)) return std::remove(path.c_str()) == 0 || errno == ENOENT;
  // FTW_PHYS: a symlink inside the tree is removed, not followed.
  ::nftw(path.c_str(), remove_entry, 16, FTW_DEPTH | FTW_PHYS);
  return ::lstat(path.c_str(), &st) != 0 && errno == ENOENT;
}

}  // namespace swarmt
