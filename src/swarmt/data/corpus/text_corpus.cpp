#include "swarmt/data/corpus/text_corpus.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "swarmt/core/error.h"
#include "swarmt/data/synthetic/essay_text.h"

namespace fs = std::filesystem;

namespace swarmt::data {

bool is_blank_text(const std::string& text) {
  return std::all_of(text.begin(), text.end(), [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; });
}

size_t invalid_utf8_offset(const std::string& text) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  size_t i = 0;
  while (i < n) {
    const unsigned char c = s[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t length;
    uint32_t code, min_code;
    if ((c & 0xE0) == 0xC0) length = 2, code = c & 0x1F, min_code = 0x80;
    else if ((c & 0xF0) == 0xE0) length = 3, code = c & 0x0F, min_code = 0x800;
    else if ((c & 0xF8) == 0xF0) length = 4, code = c & 0x07, min_code = 0x10000;
    else return i;  // a continuation byte without a lead, or 0xF8..0xFF
    if (i + length > n) return i;
    for (size_t k = 1; k < length; ++k) {
      if ((s[i + k] & 0xC0) != 0x80) return i;
      code = (code << 6) | (s[i + k] & 0x3F);
    }
    if (code < min_code || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return i;
    i += length;
  }
  return std::string::npos;
}

namespace {

// BadInput "<file>:<line>: invalid UTF-8 (byte 0xNN at column C)" if `text` (which starts at
// `first_line` of `path`) is not UTF-8.
void check_utf8(const std::string& text, const std::string& path, int64_t first_line) {
  const size_t bad = invalid_utf8_offset(text);
  if (bad == std::string::npos) return;
  const int64_t line = first_line + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(bad), '\n');
  const size_t line_start = text.rfind('\n', bad == 0 ? 0 : bad - 1);
  const size_t column = bad - (line_start == std::string::npos || bad == 0 ? 0 : line_start + 1) + 1;
  static const char* kHex = "0123456789abcdef";
  const auto byte = static_cast<unsigned char>(text[bad]);
  throw_input_error(path, ":", line, ": invalid UTF-8 (byte 0x", kHex[byte >> 4], kHex[byte & 15], " at column ", column,
                    "); text files must be UTF-8");
}

class WholeFileDocuments : public DocumentStream {
 public:
  explicit WholeFileDocuments(std::string path) : path_(std::move(path)) {}
  bool next(Document& document) override {
    if (done_) return false;
    done_ = true;
    document.text = read_text_file(path_);
    check_utf8(document.text, path_, 1);
    document.where = path_;
    return true;
  }

 private:
  std::string path_;
  bool done_ = false;
};

class ParagraphDocuments : public DocumentStream {
 public:
  explicit ParagraphDocuments(std::string path) : path_(std::move(path)), in_(path_, std::ios::binary) {
    SWARMT_CHECK_INPUT(in_.is_open(), path_, ": cannot open file for reading");
  }
  bool next(Document& document) override {
    document.text.clear();
    int64_t first_line = 0;
    std::string line;
    while (std::getline(in_, line)) {
      ++line_number_;
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (is_blank_text(line)) {
        if (first_line > 0) break;  // end of the paragraph
        continue;
      }
      check_utf8(line, path_, line_number_);
      if (first_line == 0) first_line = line_number_;
      else document.text += '\n';
      document.text += line;
    }
    SWARMT_CHECK_INPUT(!in_.bad(), path_, ": read error after line ", line_number_);
    if (first_line == 0) return false;
    document.where = str_cat(path_, ":", first_line);
    return true;
  }

 private:
  std::string path_;
  std::ifstream in_;
  int64_t line_number_ = 0;
};

class JsonlDocuments : public DocumentStream {
 public:
  JsonlDocuments(const std::string& path, std::string field) : reader_(path), field_(std::move(field)) {}
  bool next(Document& document) override {
    Json record;
    while (reader_.next(record)) {
      JsonView view(record, reader_.where());
      document.text = view.get_string(field_);
      document.where = reader_.where();
      return true;
    }
    return false;
  }

 private:
  JsonlReader reader_;
  std::string field_;
};

}  // namespace

std::unique_ptr<DocumentStream> open_text_documents(const std::string& path, bool split_paragraphs) {
  SWARMT_CHECK_INPUT(fs::is_regular_file(path), path, ": no such file");
  if (split_paragraphs) return std::make_unique<ParagraphDocuments>(path);
  return std::make_unique<WholeFileDocuments>(path);
}

std::unique_ptr<DocumentStream> open_jsonl_documents(const std::string& path, const std::string& field) {
  SWARMT_CHECK_INPUT(!field.empty(), "the JSONL text field name must not be empty");
  SWARMT_CHECK_INPUT(fs::is_regular_file(path), path, ": no such file");
  return std::make_unique<JsonlDocuments>(path, field);
}

std::string resolve_document_format(const std::string& path, const std::string& format) {
  if (format == "txt" || format == "jsonl") return format;
  SWARMT_CHECK_INPUT(format == "auto", "--format must be txt, jsonl or auto (got '", format, "')");
  const std::string ext = fs::path(path).extension().string();
  return ext == ".jsonl" || ext == ".json" ? "jsonl" : "txt";
}

// ---------------------------------------------------------------------------------------------------

void append_passages(const std::string& text, ProseCorpus& corpus) {
  size_t pos = 0;
  while (pos < text.size()) {
    // A paragraph ends at a blank line ("\n" followed by optional spaces and another "\n").
    size_t end = pos;
    for (;;) {
      end = text.find('\n', end);
      if (end == std::string::npos) break;
      size_t k = end + 1;
      while (k < text.size() && (text[k] == ' ' || text[k] == '\t' || text[k] == '\r')) ++k;
      if (k >= text.size() || text[k] == '\n') break;
      end = k;
    }
    const size_t stop = end == std::string::npos ? text.size() : end;
    auto words = split_words(text.substr(pos, stop - pos));
    if (!words.empty()) {
      std::string normalised;
      for (size_t i = 0; i < words.size(); ++i) normalised += (i ? " " : "") + words[i];
      corpus.passages.push_back(split_sentences(normalised));
      corpus.num_words += static_cast<int64_t>(words.size());
    }
    pos = stop + 1;
  }
}

const ProseCorpus& builtin_prose_corpus() {
  static const ProseCorpus kCorpus = [] {
    ProseCorpus corpus;
    corpus.name = "built-in essay text";
    append_passages(builtin_essay_text(), corpus);
    return corpus;
  }();
  return kCorpus;
}

ProseCorpus load_prose_corpus(const std::string& directory) {
  SWARMT_CHECK_INPUT(fs::is_directory(directory), directory, ": corpus directory does not exist");
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(directory))
    if (entry.is_regular_file() && entry.path().extension() == ".txt") files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  SWARMT_CHECK_INPUT(!files.empty(), directory, ": corpus directory has no .txt file");
  ProseCorpus corpus;
  corpus.name = directory;
  for (const auto& file : files) {
    const std::string text = read_text_file(file);
    check_utf8(text, file, 1);
    append_passages(text, corpus);
  }
  SWARMT_CHECK_INPUT(corpus.num_words > 0, directory, ": the .txt files of the corpus contain no words");
  return corpus;
}

}  // namespace swarmt::data
