// Process memory, for benchmarks and constant-memory checks: peak and current resident set size.
#pragma once

#include <cstdint>

namespace swarmt {

// Peak resident set size of this process so far (bytes), from getrusage.
int64_t peak_rss_bytes();
// Current resident set size (bytes), from /proc/self/statm.
int64_t current_rss_bytes();
// Resets the kernel's peak-RSS counter of this process (Linux >= 4.0: writes 5 to /proc/self/clear_refs)
// so that peak_rss_bytes() measures from now on. Returns false if the kernel refused.
bool reset_peak_rss();
// Peak RSS since the last reset (reads VmHWM from /proc/self/status, which clear_refs resets).
int64_t peak_rss_since_reset_bytes();

}  // namespace swarmt
