#include "swarmt/core/memory_budget.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "swarmt/core/error.h"

namespace swarmt {

namespace {

int64_t read_int_file(const std::string& path) {
  std::ifstream in(path);
  std::string text;
  if (!(in >> text) || text == "max") return -1;
  try {
    return std::stoll(text);
  } catch (const std::exception&) {
    return -1;
  }
}

int64_t parse_size(const std::string& text) {
  size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  const std::string suffix = text.substr(used);
  double scale = 1;
  if (suffix == "K" || suffix == "k") scale = 1024.0;
  else if (suffix == "M" || suffix == "m") scale = 1024.0 * 1024;
  else if (suffix == "G" || suffix == "g") scale = 1024.0 * 1024 * 1024;
  else SWARMT_CHECK_INPUT(suffix.empty(), "SWARMT_MEMORY_LIMIT: '", text, "' is not a size (bytes, or with K, M, G)");
  SWARMT_CHECK_INPUT(used > 0 && value > 0, "SWARMT_MEMORY_LIMIT: '", text, "' is not a positive size");
  return static_cast<int64_t>(value * scale);
}

}  // namespace

int64_t available_memory_bytes() {
  if (const char* limit = std::getenv("SWARMT_MEMORY_LIMIT"); limit && *limit) return parse_size(limit);
  int64_t available = -1;
  std::ifstream meminfo("/proc/meminfo");
  std::string line;
  while (std::getline(meminfo, line)) {
    if (line.rfind("MemAvailable:", 0) == 0) {
      std::istringstream fields(line.substr(13));
      int64_t kib = 0;
      if (fields >> kib) available = kib * 1024;
    }
  }
  const int64_t cgroup_max = read_int_file("/sys/fs/cgroup/memory.max");
  const int64_t cgroup_used = read_int_file("/sys/fs/cgroup/memory.current");
  if (cgroup_max > 0 && cgroup_used >= 0) {
    const int64_t left = cgroup_max - cgroup_used;
    if (available < 0 || left < available) available = std::max<int64_t>(left, 0);
  }
  return available;
}

std::string format_bytes(int64_t bytes) { return format_bytes(static_cast<double>(bytes)); }

std::string format_bytes(double b) {
  const double tib = 1024.0 * 1024 * 1024 * 1024;
  std::ostringstream out;
  out.precision(b >= 10.0 * (1 << 30) && b < tib ? 0 : 1);
  out << std::fixed;
  if (b >= 1024 * tib) out.precision(0);
  if (b >= tib) out << b / tib << " TiB";
  else if (b >= 1024.0 * 1024 * 1024) out << b / (1024.0 * 1024 * 1024) << " GiB";
  else if (b >= 1024.0 * 1024) out << b / (1024.0 * 1024) << " MiB";
  else out << b / 1024.0 << " KiB";
  return out.str();
}

void check_memory_fits(int64_t needed_bytes, const std::string& what, const std::string& what_fits) {
  const int64_t available = available_memory_bytes();
  if (available < 0 || needed_bytes <= available) return;
  throw_input_error(what, " needs about ", format_bytes(needed_bytes), " of memory but only ", format_bytes(available),
                    " is available", what_fits.empty() ? "" : "; " + what_fits);
}

void check_count_fits(int64_t count, double bytes_each, const std::string& option, const std::string& unit,
                      const std::string& what_fits) {
  SWARMT_CHECK_INPUT(count >= 1, option, ": ", count, " must be positive");
  const double needed = static_cast<double>(count) * bytes_each;
  const int64_t available = available_memory_bytes();
  if (available < 0 || needed <= static_cast<double>(available)) return;
  const std::string each = bytes_each < 1024 ? str_cat(static_cast<int64_t>(bytes_each), " B") : format_bytes(bytes_each);
  throw_input_error(option, ": ", count, " ", unit, count == 1 ? "" : "s", " need about ", format_bytes(needed),
                    " of memory (", each, " per ", unit, ") but only ", format_bytes(available), " is available",
                    what_fits.empty() ? "" : "; " + what_fits);
}

}  // namespace swarmt
