#include "swarmt/core/kill_point.h"

#include <signal.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace swarmt {
namespace {
std::atomic<int64_t> reached{0};

void report_at_exit() { std::fprintf(stderr, "swarmt: %lld kill points reached\n", static_cast<long long>(reached.load())); }
}  // namespace

void kill_point(const char* /*where*/) {
  // Read on every call (not cached): a test may set the variable in a forked child of a process that has
  // already passed kill points.
  const char* value = std::getenv(kKillAtEnvironmentVariable);
  if (value == nullptr || *value == '\0') return;
  if (std::strcmp(value, "report") == 0) {  // count only, and print the total at exit (tests size their kills)
    if (reached++ == 0) std::atexit(report_at_exit);
    return;
  }
  const long long kill_at = std::strtoll(value, nullptr, 10);
  if (++reached == kill_at) ::raise(SIGKILL);
}

int64_t kill_points_reached() { return reached.load(); }

}  // namespace swarmt
