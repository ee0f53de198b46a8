#include "swarmt/core/dead_writers.h"

#include <signal.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>

#include "swarmt/core/remove_tree.h"

namespace fs = std::filesystem;

namespace swarmt {

long writer_pid_of_temp_name(const std::string& name) {
  for (const char* tag : {".tmp-", ".old-"}) {
    const auto pos = name.rfind(tag);
    if (pos == std::string::npos) continue;
    const char* digits = name.c_str() + pos + 5;
    char* end = nullptr;
    const long pid = std::strtol(digits, &end, 10);
    // Digits, then the end of the name or "-<counter>".
    if (end != digits && (*end == '\0' || *end == '-') && pid > 0) return pid;
  }
  return -1;
}

bool process_is_gone(long pid) {
  if (pid <= 0) return false;
  return ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
}

std::vector<std::string> remove_leftovers_of_dead_writers(const std::string& dir, const std::vector<std::string>& prefixes) {
  std::vector<std::string> doomed, removed;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    const bool ours = std::any_of(prefixes.begin(), prefixes.end(),
                                  [&](const std::string& prefix) { return name.rfind(prefix, 0) == 0; });
    if (ours && process_is_gone(writer_pid_of_temp_name(name))) doomed.push_back(entry.path().string());
  }
  std::sort(doomed.begin(), doomed.end());
  for (const std::string& path : doomed)
    if (remove_tree(path)) removed.push_back(path);
  return removed;
}

}  // namespace swarmt
