// The BPE model of tokenizer.json ("model": {"type": "BPE", ...}): one word -> token ids.
//
// Algorithm (Hugging Face `models/bpe/word.rs`, Sennrich et al. 2016 merges applied by rank):
//   1. one symbol per code point, looked up in the vocabulary (with continuing_subword_prefix on all
//      but the first and end_of_word_suffix on the last); a code point not in the vocabulary becomes
//      its UTF-8 bytes as <0xXX> tokens (byte_fallback), else unk_token (runs fused if fuse_unk), else
//      it is dropped;
//   2. every adjacent pair with a merge goes into a min-heap keyed by (rank, position); pop the best,
//      skip it if stale (a side was merged away), merge, and push the pairs it forms with its new
//      neighbours; stop when the heap is empty.
// This equals "merge the lowest-rank pair, leftmost first, until none applies" in O(n log n), which
// matters for Gemma 3: its pre-tokenizer never splits, so a whole 500 KB text segment is one word.
// Words shorter than 256 bytes are cached (byte-level models see the same words over and over); the
// cache is shared by threads behind a reader/writer lock.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "swarmt/tokenizer/vocabulary.h"

namespace swarmt::tokenizer {

struct BpeOptions {
  std::optional<std::string> unk_token;
  std::string continuing_subword_prefix;  // "" = none
  std::string end_of_word_suffix;         // "" = none
  bool fuse_unk = false;
  bool byte_fallback = false;
  bool ignore_merges = false;  // a word that is itself in the vocabulary is emitted whole
};

class BpeModel {
 public:
  // `merges` are (left, right) token pairs in rank order. A merge whose parts or result are not in the
  // vocabulary, or an unk_token that is not, is BadInput naming `source` (the file) and the field.
  BpeModel(Vocabulary vocab, const std::vector<std::pair<std::string, std::string>>& merges, BpeOptions options,
           const std::string& source);
  ~BpeModel();
  BpeModel(const BpeModel&) = delete;
  BpeModel& operator=(const BpeModel&) = delete;

  // Appends the ids of `word` (valid UTF-8). An empty word gives nothing.
  void encode_word(std::string_view word, std::vector<int32_t>& out) const;

  const Vocabulary& vocab() const { return vocab_; }
  const BpeOptions& options() const { return options_; }
  size_t num_merges() const;

 private:
  void merge_word(std::string_view word, std::vector<int32_t>& out) const;

  struct MergeTable;
  struct WordCache;
  Vocabulary vocab_;
  BpeOptions options_;
  std::unique_ptr<MergeTable> merges_;
  std::unique_ptr<WordCache> cache_;
  std::optional<int32_t> unk_id_;
  std::vector<int32_t> byte_fallback_ids_;  // id of <0xXX> per byte, -1 if absent
};

}  // namespace swarmt::tokenizer
