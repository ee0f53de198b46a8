// `swarmt data prepare`: text corpora (.txt / .jsonl) -> token files (token_file.h) for training.
//
// Documents are streamed (one in memory at a time), tokenized with the model's tokenizer as the model
// expects them (<bos> when the tokenizer config adds one; <eos> after each document with add_eos), and
// written to two token files:
//   <out>.tokens/.json              training documents
//   <out>-validation.tokens/.json   a held-out fraction of the documents
// A document is held out when a hash of its text (and the seed) falls below the fraction, so the split
// is deterministic, does not depend on the order of the inputs, and puts identical documents on the
// same side (no copy of a validation document leaks into training). Both files are published
// atomically at the end; a failure leaves no output behind.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "swarmt/data/source_factory.h"

namespace swarmt::data {

struct PrepareOptions {
  std::vector<std::string> inputs;   // .txt / .jsonl files
  std::string out_prefix;            // <out>.tokens, <out>.json, <out>-validation.*
  std::string format = "auto";       // txt | jsonl | auto (by extension)
  std::string field = "text";        // JSONL text field
  bool split_paragraphs = false;     // txt: one document per blank-line separated block
  double validation_fraction = 0.01; // in [0, 1); 0 = no validation file
  bool add_eos = false;              // append <eos> to every document
  uint64_t seed = 0;                 // changes which documents are held out
  std::string tokenizer_spec;        // recorded in the sidecar ("byte" or the directory)
};

struct PrepareSummary {
  int64_t documents = 0;             // training documents
  int64_t tokens = 0;
  int64_t validation_documents = 0;
  int64_t validation_tokens = 0;
  int64_t skipped_documents = 0;     // empty or whitespace-only
  int64_t input_bytes = 0;           // text bytes tokenized
  double seconds = 0;
  bool wrote_validation = false;
};

// True if the document goes to the validation split.
bool is_validation_document(const std::string& text, double fraction, uint64_t seed);

// Runs the whole preparation. `progress` (optional) is called after each document with the running
// summary. BadInput for missing/malformed inputs (naming file and line) and impossible options.
PrepareSummary prepare_token_files(const PrepareOptions& options, const TextTokenizer& tokenizer,
                                   const std::function<void(const PrepareSummary&)>& progress = {});

}  // namespace swarmt::data
