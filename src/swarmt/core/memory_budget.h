// Checking a request against the memory the machine can give before allocating it, so that a batch size,
// a context length or a model that cannot fit fails at once with a message saying what would fit,
// instead of the kernel's OOM killer ending the process hours later (or swapping the machine to a halt).
#pragma once

#include <cstdint>
#include <string>

namespace swarmt {

// The longest attention window (config "sliding_window", --window) swarmt accepts: 16M tokens, far beyond
// any context it runs. A sliding layer keeps a KV ring of `window` slots per stream, so a window of 2^40
// passed validation and then failed allocating.
constexpr int64_t kMaxAttentionWindow = int64_t{1} << 24;

// Memory this process may still allocate: MemAvailable of /proc/meminfo, lowered to the cgroup limit
// (memory.max minus memory.current) when one is set. SWARMT_MEMORY_LIMIT (bytes, or with a K/M/G suffix)
// overrides it, for tests and for sharing a machine. -1 if unknown (then nothing is checked).
int64_t available_memory_bytes();

// "3.2 GiB", "512 MiB", "12 KiB", "7.3 TiB".
std::string format_bytes(int64_t bytes);
std::string format_bytes(double bytes);

// Bytes a context of one token costs at least while an input is built and run, before any model state:
// its text (a byte or more per token), its ids in the tokenizer (4 B) and in a tensor (8 B), and the
// hidden state of the token in the running layer (counted separately when the model is known).
constexpr int64_t kMinBytesPerContextToken = 16;

// The one up-front check of a size the user gave (a context length, a number of segments, a window...):
// BadInput "<option>: <count> must be positive" for count < 1, and "<option>: 1000000000000 tokens need
// about 14.6 TiB of memory (16 B per token) but only 3.1 GiB is available; <what_fits>" when
// count × bytes_each cannot fit (counted in floating point, so no product overflows). `unit` is singular
// ("token"). Run it before anything is allocated, built or written.
void check_count_fits(int64_t count, double bytes_each, const std::string& option, const std::string& unit,
                      const std::string& what_fits);

// BadInput "<what> needs about <needed> but only <available> is available; <what_fits>" when `needed`
// exceeds the available memory. `what_fits` says what would (a smaller batch, a shorter context, ...).
void check_memory_fits(int64_t needed_bytes, const std::string& what, const std::string& what_fits);

}  // namespace swarmt
