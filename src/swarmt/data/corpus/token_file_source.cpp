#include "swarmt/data/corpus/token_file_source.h"

#include "swarmt/core/error.h"
#include "swarmt/core/random.h"

namespace swarmt::data {

TokenFileSource::TokenFileSource(std::shared_ptr<const TokenFile> file, int64_t sequence_length, uint64_t seed)
    : file_(std::move(file)), sequence_length_(sequence_length), seed_(seed) {
  SWARMT_CHECK_INPUT(file_->num_tokens() > sequence_length_, file_->path(), ": has ", file_->num_tokens(),
                     " tokens, fewer than one training sequence (", sequence_length_ + 1, ")");
}

Sample TokenFileSource::sample(int64_t index) const {
  const int64_t span = sequence_length_ + 1;
  const uint64_t choices = static_cast<uint64_t>(file_->num_tokens() - span + 1);
  const int64_t start = static_cast<int64_t>(mix_key(seed_, static_cast<uint64_t>(index)) % choices);
  Sample s;
  s.tokens.resize(sequence_length_);
  s.targets.resize(sequence_length_);
  s.doc_ids.resize(sequence_length_);
  int64_t doc = file_->document_of(start);
  const auto& offsets = file_->document_offsets();
  const int64_t first_doc = doc;
  for (int64_t t = 0; t < span; ++t) {
    const int64_t pos = start + t;
    while (pos >= offsets[doc + 1]) ++doc;
    if (t < sequence_length_) {
      s.tokens[t] = file_->token(pos);
      s.doc_ids[t] = doc - first_doc;
    }
    if (t > 0) {
      // Target of input t-1 is token t, unless token t starts another document.
      s.targets[t - 1] = (doc - first_doc == s.doc_ids[t - 1]) ? static_cast<int64_t>(file_->token(pos)) : kIgnoreIndex;
    }
  }
  return s;
}

std::string TokenFileSource::describe() const {
  return str_cat(file_->path(), " (", file_->num_tokens(), " tokens, ", file_->num_documents(), " documents), windows of ",
                 sequence_length_);
}

}  // namespace swarmt::data
