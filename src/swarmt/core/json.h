// JSON reading with error messages that name the file and the field.
//
// config.json, tokenizer.json, trainer_state.json and friends are all read through JsonView, so a user
// who writes "hidden_size": "256" is told `config.json: field 'hidden_size' must be an integer (got
// "256")` instead of a crash.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace swarmt {

using Json = nlohmann::json;

// Deepest nesting of objects and arrays in JSON text; brackets inside strings do not count. Exact for
// every text nlohmann accepts (its strings end at the first quote not escaped by a backslash).
size_t json_nesting_depth(const std::string& text);

// Reads a whole file into a string; BadInput naming the path if it cannot be read.
std::string read_text_file(const std::string& path);

// Parses JSON text; `source` (usually the file name) prefixes any error message.
Json parse_json(const std::string& text, const std::string& source);

// Reads and parses a JSON file.
Json read_json_file(const std::string& path);

// A read-only view of one JSON object inside a file. `where` is the file name and `prefix` the path of
// this object inside it ("" for the root, "model." for a nested object), both used in error messages.
class JsonView {
 public:
  JsonView(const Json& json, std::string where, std::string prefix = "");

  bool has(const std::string& key) const;       // present and not null
  const Json& raw(const std::string& key) const;  // throws if missing
  const Json& json() const { return json_; }

  int64_t get_int(const std::string& key) const;
  int64_t get_int(const std::string& key, int64_t fallback) const;
  double get_number(const std::string& key) const;
  double get_number(const std::string& key, double fallback) const;
  bool get_bool(const std::string& key) const;
  bool get_bool(const std::string& key, bool fallback) const;
  std::string get_string(const std::string& key) const;
  std::string get_string(const std::string& key, const std::string& fallback) const;
  std::vector<int64_t> get_int_list(const std::string& key) const;
  std::vector<double> get_number_list(const std::string& key) const;
  std::vector<std::string> get_string_list(const std::string& key) const;
  JsonView object(const std::string& key) const;  // nested object; throws if not an object
  // Lists of objects: size of the list field `key`, and its element i as a view ("key[i].field" in errors).
  size_t list_size(const std::string& key) const;
  JsonView list_object(const std::string& key, size_t index) const;

  // Range-checked integers: throws naming the field if value < min or > max.
  int64_t get_int_in(const std::string& key, int64_t min, int64_t max) const;
  int64_t get_int_in(const std::string& key, int64_t fallback, int64_t min, int64_t max) const;

  // Throws naming the first key of the object that is not in `known` (catches typos in our own configs).
  void reject_unknown_keys(const std::set<std::string>& known) const;

  // "config.json: field 'model.hidden_size'" style description, for callers building their own errors.
  std::string describe(const std::string& key) const;

 private:
  const Json& field(const std::string& key) const;
  const Json& json_;
  std::string where_;
  std::string prefix_;
};

// Short rendering of a JSON value for error messages (truncated to ~60 chars).
std::string json_preview(const Json& value);

}  // namespace swarmt
