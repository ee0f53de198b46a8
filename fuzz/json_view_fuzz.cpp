// Fuzzes the JSON layer every config and sidecar goes through: parse_json on the bytes, then every
// JsonView accessor on every field, recursively into nested objects and lists of objects. Each accessor
// must either throw BadInput naming the file or return exactly what the document says (an integer read
// from 18446744073709551615 must not come back as -1; a "number" must be finite; a list keeps its length).
#include <cmath>
#include <limits>
#include <string>

#include "fuzz_harness.h"
#include "swarmt/core/error.h"
#include "swarmt/core/json.h"

namespace swarmt::fuzz {
namespace {

constexpr int kMaxDepth = 6;
constexpr size_t kMaxFields = 32;

template <typename Access>
void attempt(Access&& access) {
  try {
    access();
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::BadInput || std::string(e.what()).find(kFuzzSource) == std::string::npos) throw;
  }
}

// `value` read as an integer equals the JSON number exactly.
bool same_integer(const Json& value, int64_t read) {
  if (value.is_number_unsigned()) return read >= 0 && static_cast<uint64_t>(read) == value.get<uint64_t>();
  if (value.is_number_integer()) return read == value.get<int64_t>();
  if (value.is_number_float()) return static_cast<double>(read) == value.get<double>();
  return false;
}

void exercise(const JsonView& view, int depth);

void exercise_field(const JsonView& view, const std::string& key, int depth) {
  const Json& value = view.json()[key];
  FUZZ_REQUIRE(view.has(key) == !value.is_null(), "has() is 'present and not null'");
  FUZZ_REQUIRE(view.describe(key).find(kFuzzSource) != std::string::npos, "describe() names the file");
  FUZZ_REQUIRE(json_preview(value).size() <= 64, "previews are short");

  attempt([&] { FUZZ_REQUIRE(same_integer(value, view.get_int(key)), "get_int returns the document's integer: " + json_preview(value)); });
  attempt([&] {
    const int64_t v = view.get_int_in(key, -3, 1000);
    FUZZ_REQUIRE(v >= -3 && v <= 1000 && same_integer(value, v), "get_int_in stays in range: " + json_preview(value));
  });
  attempt([&] {
    const double v = view.get_number(key);
    FUZZ_REQUIRE(std::isfinite(v) && value.is_number() && v == value.get<double>(), "get_number is the finite number: " + json_preview(value));
  });
  attempt([&] {
    const bool v = view.get_bool(key);
    FUZZ_REQUIRE(value.is_boolean() && v == value.get<bool>(), "get_bool");
  });
  attempt([&] {
    const std::string v = view.get_string(key);
    FUZZ_REQUIRE(value.is_string() && v == value.get<std::string>(), "get_string");
  });
  attempt([&] {
    const auto list = view.get_int_list(key);
    FUZZ_REQUIRE(value.is_array() && list.size() == value.size(), "get_int_list keeps the length");
    for (size_t i = 0; i < list.size(); ++i)
      FUZZ_REQUIRE(same_integer(value[i], list[i]), "get_int_list returns the document's integers: " + json_preview(value[i]));
  });
  attempt([&] {
    const auto list = view.get_number_list(key);
    FUZZ_REQUIRE(value.is_array() && list.size() == value.size(), "get_number_list keeps the length");
    for (size_t i = 0; i < list.size(); ++i)
      FUZZ_REQUIRE(std::isfinite(list[i]), "get_number_list returns finite numbers, like get_number: " + json_preview(value[i]));
  });
  attempt([&] {
    const auto list = view.get_string_list(key);
    FUZZ_REQUIRE(value.is_array() && list.size() == value.size(), "get_string_list keeps the length");
  });
  if (depth >= kMaxDepth) return;
  attempt([&] { exercise(view.object(key), depth + 1); });
  attempt([&] {
    const size_t n = view.list_size(key);
    FUZZ_REQUIRE(value.is_array() && n == value.size(), "list_size is the array's size");
    for (size_t i = 0; i < n && i < 4; ++i) attempt([&] { exercise(view.list_object(key, i), depth + 1); });
    attempt([&] { view.list_object(key, n); });  // one past the end: BadInput
  });
}

void exercise(const JsonView& view, int depth) {
  size_t fields = 0;
  for (auto it = view.json().begin(); it != view.json().end() && fields < kMaxFields; ++it, ++fields)
    exercise_field(view, it.key(), depth);
  attempt([&] { view.raw("missing-field"); });
  attempt([&] {
    view.reject_unknown_keys({"model_type", "hidden_size", "vocab_size"});
    for (auto it = view.json().begin(); it != view.json().end(); ++it)
      FUZZ_REQUIRE(it.key() == "model_type" || it.key() == "hidden_size" || it.key() == "vocab_size",
                   "reject_unknown_keys let an unknown key through: " + it.key());
  });
}

}  // namespace

void fuzz_one(const uint8_t* data, size_t size) {
  const Json json = parse_json(std::string(reinterpret_cast<const char*>(data), size), kFuzzSource);
  const JsonView view(json, kFuzzSource);  // BadInput unless an object
  exercise(view, 0);
}

void write_seeds(const SeedWriter& seeds) {
  seeds.add("config.json", R"({"model_type": "llama", "hidden_size": 960, "rms_norm_eps": 1e-05, "tie_word_embeddings": true,
    "eos_token_id": [1, 106], "rope_scaling": {"rope_type": "llama3", "factor": 32.0}, "architectures": ["LlamaForCausalLM"],
    "torch_dtype": "bfloat16", "max_position_embeddings": 2048.0, "bos_token_id": null})");
  seeds.add("sidecar.json", R"({"format": "swarmt-tokens", "version": 1, "dtype": "uint32", "num_tokens": 7,
    "vocab_size": 259, "tokenizer": {"type": "byte"}, "document_offsets": [0, 4, 7]})");
  seeds.add("lists_of_objects.json", R"({"added_tokens": [{"id": 0, "content": "<pad>", "special": true},
    {"id": 1, "content": "<eos>", "special": true}], "weights": [0.5, -1.25, 3], "names": ["a", "b"],
    "nested": {"inner": {"value": -9223372036854775808, "big": 18446744073709551615, "float": 4096.0}}})");
}

}  // namespace swarmt::fuzz
