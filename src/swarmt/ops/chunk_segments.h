// The document segments of one chunk on raw buffers, for the chunkwise CPU kernels (the scheme of
// recurrent_chunking.h): seg_r = number of resets at positions <= r inside the chunk, and first_r = where
// r's segment starts, so that r's intra-chunk pairs (r, s) are s in [first_r, r].
#pragma once

#include <cstdint>
#include <vector>

namespace swarmt::ops::detail {

struct ChunkSegments {
  std::vector<int64_t> seg, first;
  const bool* resets = nullptr;

  // resets: the chunk's `chunk` flags, or null (one segment).
  void load(const bool* chunk_resets, int64_t chunk) {
    resets = chunk_resets;
    seg.resize(static_cast<size_t>(chunk));
    first.resize(static_cast<size_t>(chunk));
    int64_t segment = 0, start = 0;
    for (int64_t r = 0; r < chunk; ++r) {
      if (is_reset(r)) {
        ++segment;
        start = r;
      }
      seg[r] = segment;
      first[r] = start;
    }
  }
  bool is_reset(int64_t r) const { return resets && resets[r]; }
  int64_t last() const { return seg.back(); }
  bool from_start(int64_t r) const { return seg[r] == 0; }   // the carried state reaches r
  bool to_end(int64_t r) const { return seg[r] == last(); }  // r reaches the chunk-end state
  bool carried() const { return last() == 0; }               // the carried state survives the chunk
};

}  // namespace swarmt::ops::detail
