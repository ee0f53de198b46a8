#include "swarmt/data/long_context/jsonl.h"

#include <algorithm>

#include "swarmt/core/error.h"
#include "swarmt/tokenizer/utf8.h"

namespace swarmt::data {

namespace {

bool is_blank(const std::string& line) {
  for (char c : line)
    if (c != ' ' && c != '\t' && c != '\r' && c != '\n') return false;
  return true;
}

// Deepest bracket nesting of JSON text, counting only brackets outside strings. Stops counting once
// `limit` is passed (the caller rejects the line anyway).
int nesting_depth(const std::string& text, int limit) {
  int depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
      if (deepest > limit) return deepest;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

const char* type_name(const Json& value) {
  if (value.is_array()) return "a list";
  if (value.is_string()) return "a string";
  if (value.is_boolean()) return "a boolean";
  if (value.is_number()) return "a number";
  if (value.is_null()) return "null";
  return "not an object";
}

}  // namespace

Json parse_jsonl_object(const std::string& line, const std::string& where) {
  SWARMT_CHECK_INPUT(nesting_depth(line, kMaxJsonlDepth) <= kMaxJsonlDepth, where, ": JSON nested deeper than ",
                     kMaxJsonlDepth, " levels");
  Json value;
  try {
    value = Json::parse(line);
  } catch (const Json::exception& e) {
    // nlohmann's message starts with "[json.exception.parse_error.101] parse error at line 1, ...".
    std::string msg = e.what();
    auto pos = msg.find("] ");
    if (pos != std::string::npos) msg = msg.substr(pos + 2);
    // The message quotes the bytes last read, which need not be UTF-8 (often the reason for the error).
    msg = tokenizer::utf8_lossy(msg);
    throw_input_error(where, ": not valid JSON: ", msg);
  }
  SWARMT_CHECK_INPUT(value.is_object(), where, ": each line must be a JSON object, this one is ", type_name(value));
  return value;
}

JsonlReader::JsonlReader(std::string path) : path_(std::move(path)), in_(path_, std::ios::binary) {
  SWARMT_CHECK_INPUT(in_.is_open(), path_, ": cannot open file for reading");
}

std::string JsonlReader::where() const { return str_cat(path_, ":", line_number_); }

bool JsonlReader::next(Json& record) {
  while (std::getline(in_, line_)) {
    ++line_number_;
    if (line_number_ == 1 && line_.compare(0, 3, "\xEF\xBB\xBF") == 0) line_.erase(0, 3);
    if (!line_.empty() && line_.back() == '\r') line_.pop_back();
    if (is_blank(line_)) continue;
    record = parse_jsonl_object(line_, where());
    return true;
  }
  SWARMT_CHECK_INPUT(!in_.bad(), path_, ": read error after line ", line_number_);
  return false;
}

}  // namespace swarmt::data
