// Checking a request against the memory the machine can give before allocating it, so that a batch size,
// a context length or a model that cannot fit fails at once with a message saying what would fit,
// instead of the kernel's OOM killer ending the process hours later (or swapping the machine to a halt).
#pragma once

#include <cstdint>
#include <string>

namespace swarmt {

// Memory this process may still allocate: MemAvailable of /proc/meminfo, lowered to the cgroup limit
// (memory.max minus memory.current) when one is set. SWARMT_MEMORY_LIMIT (bytes, or with a K/M/G suffix)
// overrides it, for tests and for sharing a machine. -1 if unknown (then nothing is checked).
int64_t available_memory_bytes();

// "3.2 GiB", "512 MiB", "12 KiB".
std::string format_bytes(int64_t bytes);

// BadInput "<what> needs about <needed> but only <available> is available; <what_fits>" when `needed`
// exceeds the available memory. `what_fits` says what would (a smaller batch, a shorter context, ...).
void check_memory_fits(int64_t needed_bytes, const std::string& what, const std::string& what_fits);

}  // namespace swarmt
