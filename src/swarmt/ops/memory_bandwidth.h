// The machine's memory read bandwidth, the yardstick of decoding (one read of the weights per token).
#pragma once

#include <cstdint>

namespace swarmt {

// GB/s of summing a `bytes`-byte fp32 buffer (far larger than the caches) on as many threads as ATen's
// intra-op threads, best of `passes` passes after the buffer has been written once (pages resident).
double measure_read_bandwidth(int64_t bytes = int64_t(1) << 30, int passes = 5);

}  // namespace swarmt
