#include "swarmt/core/kill_point.h"

#include <signal.h>

#include <atomic>
#include <cstdlib>

namespace swarmt {
namespace {
std::atomic<int64_t> reached{0};
}  // namespace

void kill_point(const char* /*where*/) {
  // Read on every call (not cached): a test may set the variable in a forked child of a process that has
  // already passed kill points.
  const char* value = std::getenv(kKillAtEnvironmentVariable);
  if (value == nullptr || *value == '\0') return;
  const long long kill_at = std::strtoll(value, nullptr, 10);
  if (++reached == kill_at) ::raise(SIGKILL);
}

int64_t kill_points_reached() { return reached.load(); }

}  // namespace swarmt
