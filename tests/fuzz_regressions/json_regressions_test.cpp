// Inputs the fuzzers (fuzz/) found that broke the JSON layer, kept as tests. Each test names the harness
// that found the input and states the property that now holds.
#include <gtest/gtest.h>

#include <string>
#include <typeinfo>

#include "swarmt/core/error.h"
#include "swarmt/core/json.h"
#include "swarmt/models/hf_config.h"
#include "swarmt/models/swax_config.h"

namespace swarmt {
namespace {

// The message of the BadInput error `parse` throws ("" if it throws nothing; fails on any other error).
template <typename Parse>
std::string bad_input_message(Parse&& parse) {
  try {
    parse();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput) << e.what();
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected swarmt::Error, got " << typeid(e).name() << ": " << e.what();
  }
  return "";
}

// model_config_fuzz and json_view_fuzz: a number beyond the range of double made nlohmann throw
// out_of_range (not parse_error), which escaped parse_json as a non-swarmt exception. Minimised input.
TEST(FuzzRegressionJson, number_beyond_double_range_is_a_bad_input_error) {
  const std::string text = R"({"model_type": "gemma3_text", "intermediate_size":1e999, "vocab_size": 512})";
  const std::string message = bad_input_message([&] { parse_json(text, "config.json"); });
  EXPECT_NE(message.find("config.json: not valid JSON"), std::string::npos) << message;
  EXPECT_NE(message.find("1e999"), std::string::npos) << message;
}

// json_view_fuzz (on its own seed): JsonView::get_int returned -1 for 18446744073709551615, because
// nlohmann's is_number_integer() is also true for unsigned numbers. Range checks then saw -1, so a
// config could pass `bos_token_id: 18446744073709551615` off as "no bos token".
TEST(FuzzRegressionJson, integer_beyond_int64_is_rejected_not_wrapped_to_negative) {
  const Json json = parse_json(R"({"big": 18446744073709551615, "ids": [1, 18446744073709551615], "max": 9223372036854775807})",
                               "x.json");
  const JsonView view(json, "x.json");
  EXPECT_NE(bad_input_message([&] { view.get_int("big"); }).find("x.json: field 'big' is too large"), std::string::npos);
  EXPECT_NE(bad_input_message([&] { view.get_int_in("big", -1, 10); }).find("too large"), std::string::npos);
  EXPECT_NE(bad_input_message([&] { view.get_int_list("ids"); }).find("x.json: field 'ids'[1] is too large"),
            std::string::npos);
  EXPECT_EQ(view.get_int("max"), INT64_MAX);
}

TEST(FuzzRegressionJson, config_token_id_beyond_int64_is_rejected) {
  const Json swax = parse_json(R"({"model_type": "swax", "bos_token_id": 18446744073709551615})", "config.json");
  EXPECT_NE(bad_input_message([&] { models::SwaxConfig::from_json(swax, "config.json"); }).find("bos_token_id"),
            std::string::npos);
  const Json llama = parse_json(R"({"model_type": "llama", "vocab_size": 10, "hidden_size": 8, "intermediate_size": 16,
      "num_hidden_layers": 1, "num_attention_heads": 2, "bos_token_id": 18446744073709551615})", "config.json");
  EXPECT_NE(bad_input_message([&] { models::LlamaConfig::from_json(llama, "config.json"); }).find("bos_token_id"),
            std::string::npos);
}

// Found while writing json_view_fuzz (libFuzzer's default input size cannot reach it): nlohmann parses
// any depth, but copying and printing recurse per level, so a 200 KB config.json of nested brackets
// crashed swarmt with a stack overflow (LlamaConfig keeps a copy of the file; error messages print
// values).
TEST(FuzzRegressionJson, deeply_nested_document_is_rejected_instead_of_overflowing_the_stack) {
  const int depth = 100000;
  const std::string text = "{\"hidden_size\": " + std::string(depth, '[') + std::string(depth, ']') + "}";
  const std::string message = bad_input_message([&] { parse_json(text, "config.json"); });
  EXPECT_NE(message.find("config.json: JSON nested 100001 levels deep"), std::string::npos) << message;
}

TEST(FuzzRegressionJson, nesting_limit_counts_brackets_outside_strings_only) {
  const std::string deep_string = "{\"s\": \"" + std::string(5000, '[') + "\\\"" + std::string(5000, '{') + "\"}";
  EXPECT_EQ(parse_json(deep_string, "x.json")["s"].get<std::string>().size(), 10001u);
  const std::string at_limit = std::string(512, '[') + std::string(512, ']');
  const Json ok = parse_json(at_limit, "x.json");
  EXPECT_EQ(ok.dump(), at_limit);
  EXPECT_NE(bad_input_message([&] { parse_json("[" + at_limit + "]", "x.json"); }).find("513 levels"), std::string::npos);
}

}  // namespace
}  // namespace swarmt
