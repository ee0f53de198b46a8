// Text corpora: documents streamed from .txt / .jsonl files (for `swarmt data prepare`), and prose
// passages (for the synthetic long-document tasks).
//
// Document streams hold one document in memory at a time, so a corpus of any size can be tokenized.
// Every document comes with where it was found ("file", "file:line"), which error messages use.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "swarmt/data/long_context/jsonl.h"

namespace swarmt::data {

// Byte offset of the first byte that breaks UTF-8 (bad lead or continuation byte, overlong form,
// surrogate, code point > U+10FFFF, truncated sequence), or std::string::npos if `text` is valid.
size_t invalid_utf8_offset(const std::string& text);

// Only spaces, tabs, carriage returns and newlines (or nothing).
bool is_blank_text(const std::string& text);

struct Document {
  std::string text;
  std::string where;  // "file" (whole file) or "file:line" (first line of the paragraph / JSONL record)
};

class DocumentStream {
 public:
  virtual ~DocumentStream() = default;
  // The next document; false when the stream is exhausted. BadInput naming file (and line) if the
  // input is malformed (invalid UTF-8, bad JSON, missing or non-string text field).
  virtual bool next(Document& document) = 0;
};

// A .txt file: the whole file is one document, or (split_paragraphs) each block of lines separated by
// blank lines is one (its lines joined with "\n", no trailing newline).
std::unique_ptr<DocumentStream> open_text_documents(const std::string& path, bool split_paragraphs);

// A .jsonl file: one document per line, its text in the string field `field` (other fields ignored).
// Blank lines are skipped; a record whose text is empty is still returned (the caller decides).
std::unique_ptr<DocumentStream> open_jsonl_documents(const std::string& path, const std::string& field);

// "txt" / "jsonl" from the option, or from the extension when `format` is "auto" (.jsonl and .json ->
// jsonl, everything else txt). BadInput for an unknown format name.
std::string resolve_document_format(const std::string& path, const std::string& format);

// ---------------------------------------------------------------------------------------------------
// Prose passages for the long-document tasks (long_qa, facts_in_noise).

struct ProseCorpus {
  std::string name;                                  // "built-in essay text" or the directory
  std::vector<std::vector<std::string>> passages;    // passage -> sentences (single-space normalised)
  int64_t num_words = 0;
};

// The built-in essay text (essay_text.h), one passage per paragraph. Built once per process.
const ProseCorpus& builtin_prose_corpus();

// Every .txt file of `directory` (file-name order), one passage per blank-line separated paragraph.
// BadInput naming the directory if it is missing, has no .txt file, or has no words; naming the file
// and line for invalid UTF-8.
ProseCorpus load_prose_corpus(const std::string& directory);

// Passages from text: blank-line separated blocks, whitespace-normalised, split into sentences.
void append_passages(const std::string& text, ProseCorpus& corpus);

}  // namespace swarmt::data
