// JSON Lines files (one JSON value per line), read as a stream with errors that name file and line.
//
// Every line of a .jsonl file the user gives us can be wrong: not JSON, not an object, a field missing
// or of the wrong type, invalid UTF-8, absurdly deep nesting. Each problem is a BadInput error that
// starts with "<file>:<line>: ", so the user can open the file at that line; nothing crashes.
//
// What is accepted: UTF-8 text; one JSON object per line; "\r\n" line ends; a UTF-8 byte-order mark
// before the first line; blank (whitespace-only) lines, which are skipped. Nesting deeper than
// kMaxJsonlDepth is rejected before parsing (a line of a million '[' must not exhaust the stack of
// code that later walks the value).
#pragma once

#include <cstdint>
#include <fstream>
#include <string>

#include "swarmt/core/json.h"

namespace swarmt::data {

inline constexpr int kMaxJsonlDepth = 256;

// Parses one line as a JSON object. `where` ("file:line") prefixes every error message.
Json parse_jsonl_object(const std::string& line, const std::string& where);

// Reads a .jsonl file record by record; only the current line is held in memory.
class JsonlReader {
 public:
  // BadInput naming the path if the file cannot be opened.
  explicit JsonlReader(std::string path);

  // The next non-blank line as a JSON object; false at the end of the file.
  bool next(Json& record);

  // 1-based line number of the record last returned by next().
  int64_t line_number() const { return line_number_; }
  // "path:line" of the record last returned, for error messages about its fields.
  std::string where() const;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::ifstream in_;
  int64_t line_number_ = 0;
  std::string line_;
};

}  // namespace swarmt::data
