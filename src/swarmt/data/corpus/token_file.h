// Token files: the training-data format of swarmt.
//
//   <name>.tokens   flat little-endian uint32 token ids, documents back to back
//   <name>.json     sidecar: {"format": "swarmt-tokens", "version": 1, "dtype": "uint32",
//                             "num_tokens": N, "vocab_size": V, "tokenizer": {...},
//                             "document_offsets": [0, o_1, ..., N]}      (document i = [o_i, o_{i+1}))
//
// Reading maps the token file into memory; every field of the sidecar is validated against the file
// (size == 4·num_tokens, offsets start at 0, increase, end at num_tokens) with errors naming the file.
// Writing goes through a temporary file and a rename, so a killed `data prepare` never leaves a file
// that passes for complete.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "swarmt/core/json.h"

namespace swarmt::data {

class TokenFile {
 public:
  // `path` is the sidecar (.json) or the token file (.tokens); the other is found beside it.
  static TokenFile open(const std::string& path);

  int64_t num_tokens() const { return num_tokens_; }
  int64_t num_documents() const { return static_cast<int64_t>(offsets_.size()) - 1; }
  int64_t vocab_size() const { return vocab_size_; }
  const std::vector<int64_t>& document_offsets() const { return offsets_; }
  const Json& tokenizer_info() const { return tokenizer_; }
  const std::string& path() const { return tokens_path_; }

  // Token at absolute index i (no bounds check beyond an assertion in debug builds).
  uint32_t token(int64_t i) const { return data_[i]; }
  const uint32_t* data() const { return data_; }
  // Index of the document containing token i.
  int64_t document_of(int64_t i) const;
  // Checks every token against vocab_size (a full scan); throws naming the file and the first bad index.
  void validate_tokens() const;

 private:
  std::shared_ptr<void> mapping_;
  const uint32_t* data_ = nullptr;
  int64_t num_tokens_ = 0;
  int64_t vocab_size_ = 0;
  std::vector<int64_t> offsets_;
  Json tokenizer_;
  std::string tokens_path_;
};

// Writes a token file document by document, then commit() publishes both files atomically.
class TokenFileWriter {
 public:
  // `prefix` is the output path without extension (<prefix>.tokens, <prefix>.json).
  TokenFileWriter(const std::string& prefix, int64_t vocab_size, Json tokenizer_info);
  ~TokenFileWriter();
  void add_document(const std::vector<int32_t>& tokens);
  void commit();
  int64_t num_tokens() const { return num_tokens_; }
  int64_t num_documents() const { return static_cast<int64_t>(offsets_.size()) - 1; }

 private:
  std::string prefix_, tmp_tokens_;
  int fd_ = -1;
  int64_t vocab_size_;
  Json tokenizer_;
  int64_t num_tokens_ = 0;
  std::vector<int64_t> offsets_{0};
  bool committed_ = false;
};

// "<prefix>.json" / "<prefix>.tokens" from either name.
std::string token_sidecar_path(const std::string& path);
std::string token_data_path(const std::string& path);

}  // namespace swarmt::data
