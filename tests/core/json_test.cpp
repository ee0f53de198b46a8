#include "swarmt/core/json.h"

#include <gtest/gtest.h>

#include "swarmt/core/error.h"
#include "bad_input.h"
#include "test_util.h"

namespace swarmt {
namespace {

using testing::error_of;

TEST(JsonView, reads_typed_fields_and_defaults) {
  Json j = Json::parse(R"({"a": 3, "b": 2.5, "c": "x", "d": true, "e": [1, 2], "f": {"g": 7}, "h": 4.0})");
  JsonView v(j, "cfg.json");
  EXPECT_EQ(v.get_int("a"), 3);
  EXPECT_EQ(v.get_int("h"), 4);  // integral floats are accepted as integers
  EXPECT_DOUBLE_EQ(v.get_number("b"), 2.5);
  EXPECT_EQ(v.get_string("c"), "x");
  EXPECT_TRUE(v.get_bool("d"));
  EXPECT_EQ(v.get_int_list("e"), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(v.object("f").get_int("g"), 7);
  EXPECT_EQ(v.get_int("missing", 11), 11);
}

TEST(JsonView, wrong_types_name_the_file_and_field) {
  Json j = Json::parse(R"({"hidden_size": "256", "model": {"layers": -1}, "rate": 2.5})");
  JsonView v(j, "config.json");
  EXPECT_EQ(error_of([&] { v.get_int("hidden_size"); }),
            "config.json: field 'hidden_size' must be an integer (got \"256\")");
  EXPECT_EQ(error_of([&] { v.object("model").get_int_in("layers", 1, 100); }),
            "config.json: field 'model.layers' must be in [1, 100] (got -1)");
  EXPECT_EQ(error_of([&] { v.get_int("rate"); }), "config.json: field 'rate' must be an integer (got 2.5)");
  EXPECT_EQ(error_of([&] { v.get_string("absent"); }), "config.json: field 'absent' is missing");
}

TEST(JsonView, unknown_keys_are_rejected_by_name) {
  Json j = Json::parse(R"({"learning_rate": 1, "lerning_rate": 2})");
  JsonView v(j, "train.json");
  EXPECT_EQ(error_of([&] { v.reject_unknown_keys({"learning_rate"}); }),
            "train.json: field 'lerning_rate' is not a known field");
}

TEST(ParseJson, syntax_errors_name_the_source) {
  std::string msg = error_of([] { parse_json("{\"a\": ", "broken.json"); });
  EXPECT_EQ(msg.rfind("broken.json: not valid JSON:", 0), 0u) << msg;
}

TEST(ParseJson, bytes_that_are_not_utf8_are_shown_escaped_not_echoed) {
  const std::string msg = error_of([] { parse_json("{\"model\": \"caf\xe9\"}", "latin1.json"); });
  EXPECT_EQ(msg.rfind("latin1.json: not valid JSON:", 0), 0u) << msg;
  EXPECT_NE(msg.find("\\xe9"), std::string::npos) << msg;
  for (unsigned char c : msg) EXPECT_TRUE(c >= 0x20 && c < 0x7f) << "byte " << int(c) << " in: " << msg;
}

TEST(ReadJsonFile, a_directory_is_not_read_as_an_empty_file) {
  testing::TempDir tmp;
  EXPECT_EQ(error_of([&] { read_text_file(tmp.path()); }), tmp.path() + ": is a directory, not a file");
}

TEST(ReadJsonFile, missing_file_is_a_clear_error) {
  EXPECT_EQ(error_of([] { read_json_file("/nonexistent/dir/config.json"); }),
            "/nonexistent/dir/config.json: cannot open file for reading");
}

}  // namespace
}  // namespace swarmt
