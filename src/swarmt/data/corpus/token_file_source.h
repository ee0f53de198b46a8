// Training samples cut from a token file: sample i is the window of sequence_length + 1 tokens starting
// at an offset drawn from (seed, i), so samples cover the corpus uniformly and are reproducible.
// Document boundaries inside a window become doc_ids (the model resets recurrent states and masks
// attention there), and targets that would cross into another document are ignored.
#pragma once

#include "swarmt/data/batch.h"
#include "swarmt/data/corpus/token_file.h"

namespace swarmt::data {

class TokenFileSource : public DataSource {
 public:
  TokenFileSource(std::shared_ptr<const TokenFile> file, int64_t sequence_length, uint64_t seed);
  Sample sample(int64_t index) const override;
  int64_t sequence_length() const override { return sequence_length_; }
  std::string describe() const override;

 private:
  std::shared_ptr<const TokenFile> file_;
  int64_t sequence_length_;
  uint64_t seed_;
};

}  // namespace swarmt::data
