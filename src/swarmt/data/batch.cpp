#include "swarmt/data/batch.h"

#include "swarmt/core/error.h"

namespace swarmt::data {

int64_t Batch::num_target_tokens() const { return (targets != kIgnoreIndex).sum().item<int64_t>(); }

Batch make_batch(const DataSource& source, int64_t first, int64_t count) {
  SWARMT_CHECK(count > 0);
  std::vector<Sample> samples;
  samples.reserve(count);
  for (int64_t i = 0; i < count; ++i) samples.push_back(source.sample(first + i));
  const int64_t n = static_cast<int64_t>(samples[0].tokens.size());
  const bool with_docs = !samples[0].doc_ids.empty();
  auto opts = at::TensorOptions().dtype(at::kLong);
  Batch b;
  b.tokens = at::empty({count, n}, opts);
  b.targets = at::empty({count, n}, opts);
  if (with_docs) b.doc_ids = at::empty({count, n}, opts);
  for (int64_t r = 0; r < count; ++r) {
    const Sample& s = samples[r];
    SWARMT_CHECK(static_cast<int64_t>(s.tokens.size()) == n && static_cast<int64_t>(s.targets.size()) == n,
                 "samples of one batch must have the same length");
    std::memcpy(b.tokens[r].data_ptr<int64_t>(), s.tokens.data(), n * sizeof(int64_t));
    std::memcpy(b.targets[r].data_ptr<int64_t>(), s.targets.data(), n * sizeof(int64_t));
    if (with_docs) {
      SWARMT_CHECK(static_cast<int64_t>(s.doc_ids.size()) == n, "doc_ids length mismatch");
      std::memcpy(b.doc_ids[r].data_ptr<int64_t>(), s.doc_ids.data(), n * sizeof(int64_t));
    }
  }
  return b;
}

}  // namespace swarmt::data
