#include "swarmt/core/json.h"

#include <algorithm>
#include <filesystem>
#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>

#include "swarmt/core/error.h"

namespace swarmt {

size_t json_nesting_depth(const std::string& text) {
  size_t depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

std::string read_text_file(const std::string& path) {
  // A directory opens as an empty stream on Linux: it would read as an empty file.
  std::error_code ec;
  SWARMT_CHECK_INPUT(!std::filesystem::is_directory(path, ec), path, ": is a directory, not a file");
  std::ifstream in(path, std::ios::binary);
  SWARMT_CHECK_INPUT(in.good(), path, ": cannot open file for reading");
  std::ostringstream ss;
  ss << in.rdbuf();
  SWARMT_CHECK_INPUT(!in.bad(), path, ": read error");
  return ss.str();
}

namespace {

// Documents nested deeper than this are rejected. nlohmann parses any depth, but copying, comparing and
// printing a document recurse once per level: 100k nested brackets (a 200 KB file) overflow the stack.
// Real configs and tokenizer.json files nest fewer than 10 levels.
constexpr size_t kMaxJsonNesting = 512;

// nlohmann quotes the bytes it stopped at ("last read: '"\xff'"): raw bytes of a file that is not UTF-8
// would make the message itself invalid text. Bytes outside printable ASCII are shown as \xNN.
std::string printable_ascii(const std::string& text) {
  static const char* kHex = "0123456789abcdef";
  std::string out;
  for (unsigned char c : text) {
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

}  // namespace

Json parse_json(const std::string& text, const std::string& source) {
  const size_t depth = json_nesting_depth(text);
  SWARMT_CHECK_INPUT(depth <= kMaxJsonNesting, source, ": JSON nested ", depth, " levels deep (the limit is ",
                     kMaxJsonNesting, ")");
  try {
    return Json::parse(text);
  } catch (const Json::exception& e) {
    // Syntax errors are parse_error, numbers beyond double range ("1e999") out_of_range. nlohmann's
    // message starts with "[json.exception.parse_error.101] parse error at line 1, ...".
    std::string msg = e.what();
    auto pos = msg.find("] ");
    if (pos != std::string::npos) msg = msg.substr(pos + 2);
    throw_input_error(source, ": not valid JSON: ", printable_ascii(msg));
  }
}

Json read_json_file(const std::string& path) { return parse_json(read_text_file(path), path); }

std::string json_preview(const Json& value) {
  std::string s = value.dump();
  if (s.size() > 60) s = s.substr(0, 57) + "...";
  return s;
}

JsonView::JsonView(const Json& json, std::string where, std::string prefix)
    : json_(json), where_(std::move(where)), prefix_(std::move(prefix)) {
  SWARMT_CHECK_INPUT(json_.is_object(), where_, ": ", prefix_.empty() ? std::string("the document")
                                                                     : "field '" + prefix_.substr(0, prefix_.size() - 1) + "'",
                     " must be a JSON object (got ", json_preview(json_), ")");
}

std::string JsonView::describe(const std::string& key) const {
  return str_cat(where_, ": field '", prefix_, key, "'");
}

bool JsonView::has(const std::string& key) const {
  auto it = json_.find(key);
  return it != json_.end() && !it->is_null();
}

const Json& JsonView::field(const std::string& key) const {
  auto it = json_.find(key);
  SWARMT_CHECK_INPUT(it != json_.end() && !it->is_null(), describe(key), " is missing");
  return *it;
}

const Json& JsonView::raw(const std::string& key) const { return field(key); }

int64_t JsonView::get_int(const std::string& key) const {
  const Json& v = field(key);
  // Unsigned first: nlohmann's is_number_integer() is also true for unsigned values, and get<int64_t>()
  // would wrap 18446744073709551615 to -1.
  if (v.is_number_unsigned()) {
    auto u = v.get<uint64_t>();
    SWARMT_CHECK_INPUT(u <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max()), describe(key),
                       " is too large (got ", u, ")");
    return static_cast<int64_t>(u);
  }
  if (v.is_number_integer()) return v.get<int64_t>();
  if (v.is_number_float()) {
    double d = v.get<double>();
    // Accept 2048.0 but not 2048.5: some writers emit integral floats.
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.0e15) return static_cast<int64_t>(d);
  }
  throw_input_error(describe(key), " must be an integer (got ", json_preview(v), ")");
}

int64_t JsonView::get_int(const std::string& key, int64_t fallback) const {
  return has(key) ? get_int(key) : fallback;
}

int64_t JsonView::get_int_in(const std::string& key, int64_t min, int64_t max) const {
  int64_t v = get_int(key);
  SWARMT_CHECK_INPUT(v >= min && v <= max, describe(key), " must be in [", min, ", ", max, "] (got ", v, ")");
  return v;
}

int64_t JsonView::get_int_in(const std::string& key, int64_t fallback, int64_t min, int64_t max) const {
  return has(key) ? get_int_in(key, min, max) : fallback;
}

double JsonView::get_number(const std::string& key) const {
  const Json& v = field(key);
  SWARMT_CHECK_INPUT(v.is_number(), describe(key), " must be a number (got ", json_preview(v), ")");
  double d = v.get<double>();
  SWARMT_CHECK_INPUT(std::isfinite(d), describe(key), " must be finite (got ", json_preview(v), ")");
  return d;
}

double JsonView::get_number(const std::string& key, double fallback) const {
  return has(key) ? get_number(key) : fallback;
}

bool JsonView::get_bool(const std::string& key) const {
  const Json& v = field(key);
  SWARMT_CHECK_INPUT(v.is_boolean(), describe(key), " must be true or false (got ", json_preview(v), ")");
  return v.get<bool>();
}

bool JsonView::get_bool(const std::string& key, bool fallback) const {
  return has(key) ? get_bool(key) : fallback;
}

std::string JsonView::get_string(const std::string& key) const {
  const Json& v = field(key);
  SWARMT_CHECK_INPUT(v.is_string(), describe(key), " must be a string (got ", json_preview(v), ")");
  return v.get<std::string>();
}

std::string JsonView::get_string(const std::string& key, const std::string& fallback) const {
  return has(key) ? get_string(key) : fallback;
}

std::vector<int64_t> JsonView::get_int_list(const std::string& key) const {
  const Json& v = field(key);
  SWARMT_CHECK_INPUT(v.is_array(), describe(key), " must be a list of integers (got ", json_preview(v), ")");
  std::vector<int64_t> out;
  for (size_t i = 0; i < v.size(); ++i) {
    SWARMT_CHECK_INPUT(v[i].is_number_integer(), describe(key), "[", i, "] must be an integer (got ",
                       json_preview(v[i]), ")");
    SWARMT_CHECK_INPUT(!v[i].is_number_unsigned() ||
                           v[i].get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max()),
                       describe(key), "[", i, "] is too large (got ", json_preview(v[i]), ")");
    out.push_back(v[i].get<int64_t>());
  }
  return out;
}

std::vector<double> JsonView::get_number_list(const std::string& key) const {
  const Json& v = field(key);
  SWARMT_CHECK_INPUT(v.is_array(), describe(key), " must be a list of numbers (got ", json_preview(v), ")");
  std::vector<double> out;
  for (size_t i = 0; i < v.size(); ++i) {
    SWARMT_CHECK_INPUT(v[i].is_number(), describe(key), "[", i, "] must be a number (got ", json_preview(v[i]), ")");
    out.push_back(v[i].get<double>());
  }
  return out;
}

std::vector<std::string> JsonView::get_string_list(const std::string& key) const {
  const Json& v = field(key);
  SWARMT_CHECK_INPUT(v.is_array(), describe(key), " must be a list of strings (got ", json_preview(v), ")");
  std::vector<std::string> out;
  for (size_t i = 0; i < v.size(); ++i) {
    SWARMT_CHECK_INPUT(v[i].is_string(), describe(key), "[", i, "] must be a string (got ", json_preview(v[i]), ")");
    out.push_back(v[i].get<std::string>());
  }
  return out;
}

JsonView JsonView::object(const std::string& key) const {
  const Json& v = field(key);
  SWARMT_CHECK_INPUT(v.is_object(), describe(key), " must be a JSON object (got ", json_preview(v), ")");
  return JsonView(v, where_, prefix_ + key + ".");
}

size_t JsonView::list_size(const std::string& key) const {
  const Json& v = field(key);
  SWARMT_CHECK_INPUT(v.is_array(), describe(key), " must be a list (got ", json_preview(v), ")");
  return v.size();
}

JsonView JsonView::list_object(const std::string& key, size_t index) const {
  const Json& v = field(key);
  SWARMT_CHECK_INPUT(v.is_array() && index < v.size(), describe(key), " has no element ", index);
  SWARMT_CHECK_INPUT(v[index].is_object(), describe(key), "[", index, "] must be a JSON object (got ",
                     json_preview(v[index]), ")");
  return JsonView(v[index], where_, str_cat(prefix_, key, "[", index, "]."));
}

void JsonView::reject_unknown_keys(const std::set<std::string>& known) const {
  for (auto it = json_.begin(); it != json_.end(); ++it) {
    SWARMT_CHECK_INPUT(known.count(it.key()) > 0, describe(it.key()), " is not a known field");
  }
}

}  // namespace swarmt
