#include "swarmt/data/long_context/jsonl.h"

#include <gtest/gtest.h>

#include "swarmt/core/error.h"
#include "swarmt/data/corpus/text_corpus.h"
#include "swarmt/data/long_context/long_context_dataset.h"
#include "bad_input.h"
#include "test_util.h"

namespace swarmt::data {
namespace {

using testing::error_of;

// Reads every record of a JSONL file through the document stream (field "text").
std::vector<std::string> read_texts(const std::string& path) {
  auto stream = open_jsonl_documents(path, "text");
  std::vector<std::string> texts;
  Document doc;
  while (stream->next(doc)) texts.push_back(doc.text);
  return texts;
}

TEST(Jsonl, records_are_read_with_bom_crlf_and_blank_lines) {
  testing::TempDir dir;
  testing::write_file(dir.file("a.jsonl"), "\xEF\xBB\xBF{\"text\": \"one\"}\r\n\n   \n{\"text\": \"two\", \"x\": 1}\n");
  JsonlReader reader(dir.file("a.jsonl"));
  Json record;
  ASSERT_TRUE(reader.next(record));
  EXPECT_EQ(record["text"], "one");
  EXPECT_EQ(reader.line_number(), 1);
  ASSERT_TRUE(reader.next(record));
  EXPECT_EQ(record["text"], "two");
  EXPECT_EQ(reader.where(), dir.file("a.jsonl") + ":4");
  EXPECT_FALSE(reader.next(record));
}

TEST(Jsonl, malformed_lines_are_rejected_with_file_and_line) {
  testing::TempDir dir;
  struct Case {
    std::string line;
    std::string expected;  // message after "<file>:2: "
  };
  const std::vector<Case> cases = {
      {"{\"text\": \"unterminated}", "not valid JSON: "},
      {"[1, 2, 3]", "each line must be a JSON object, this one is a list"},
      {"\"just a string\"", "each line must be a JSON object, this one is a string"},
      {"42", "each line must be a JSON object, this one is a number"},
      {"{\"text\": 3}", "field 'text' must be a string (got 3)"},
      {"{\"body\": \"x\"}", "field 'text' is missing"},
      {"{\"text\": null}", "field 'text' is missing"},
      {"{\"text\": \"bad \xff byte\"}", "not valid JSON: "},
      {"{\"text\": \"a\"} trailing", "not valid JSON: "},
      {std::string(100000, '['), "JSON nested deeper than 256 levels"},
      {"{\"text\": " + std::string(300, '[') + std::string(300, ']') + "}", "JSON nested deeper than 256 levels"},
  };
  for (const auto& c : cases) {
    const std::string path = dir.file("bad.jsonl");
    testing::write_file(path, "{\"text\": \"fine\"}\n" + c.line + "\n");
    const std::string message = error_of([&] { read_texts(path); });
    EXPECT_EQ(message.rfind(path + ":2: " + c.expected, 0), 0u) << "line: " << c.line.substr(0, 60) << "\nmessage: " << message;
    // The message goes to a terminal: it must be UTF-8 even when the line is not.
    EXPECT_EQ(invalid_utf8_offset(message), std::string::npos) << message;
  }
}

TEST(Jsonl, brackets_inside_strings_do_not_count_as_nesting) {
  testing::TempDir dir;
  const std::string text(1000, '[');
  testing::write_file(dir.file("a.jsonl"), "{\"text\": \"" + text + "\"}\n");
  EXPECT_EQ(read_texts(dir.file("a.jsonl")), std::vector<std::string>{text});
}

TEST(Jsonl, missing_file_is_a_clear_error) {
  EXPECT_EQ(error_of([] { JsonlReader reader("/nonexistent/x.jsonl"); }),
            "/nonexistent/x.jsonl: cannot open file for reading");
}

// Examples of the synthetic datasets: every field is required with its type.
TEST(Jsonl, long_context_examples_reject_missing_and_mistyped_fields) {
  const Json good = {{"id", "a/in/0"}, {"task", "long_qa"},   {"bucket", "in"}, {"length_tokens", 10},
                     {"context", "c"}, {"question", "q"},      {"answer", "a"},  {"depth", 12.5}};
  LongContextExample e = example_from_json(good, "f.jsonl:3");
  EXPECT_EQ(e.answer, "a");
  EXPECT_DOUBLE_EQ(e.depth, 12.5);
  auto with = [&](const std::string& key, const Json& value) {
    Json j = good;
    if (value.is_null()) j.erase(key);
    else j[key] = value;
    return j;
  };
  EXPECT_EQ(error_of([&] { example_from_json(with("context", nullptr), "f.jsonl:3"); }),
            "f.jsonl:3: field 'context' is missing");
  EXPECT_EQ(error_of([&] { example_from_json(with("answer", 7), "f.jsonl:3"); }),
            "f.jsonl:3: field 'answer' must be a string (got 7)");
  EXPECT_EQ(error_of([&] { example_from_json(with("length_tokens", "10"), "f.jsonl:3"); }),
            "f.jsonl:3: field 'length_tokens' must be an integer (got \"10\")");
  EXPECT_EQ(error_of([&] { example_from_json(with("depth", 120), "f.jsonl:3"); }),
            "f.jsonl:3: field 'depth' must be a percentage in [0, 100] (got 120)");
  EXPECT_EQ(error_of([&] { example_from_json(with("answer", ""), "f.jsonl:3"); }),
            "f.jsonl:3: field 'answer' must not be empty");
}

TEST(Jsonl, examples_round_trip_through_their_jsonl_line) {
  LongContextExample e{"t/in/1", "facts_in_noise", "in", 321, "ctx \"quoted\"\nline", "Question: Where?\nAnswer:",
                       "kitchen", 42.25};
  const std::string line = example_to_jsonl(e);
  EXPECT_EQ(line.find('\n'), std::string::npos);
  EXPECT_EQ(line.rfind("{\"id\":\"t/in/1\",\"task\":\"facts_in_noise\",\"bucket\":\"in\",\"length_tokens\":321,", 0), 0u);
  LongContextExample back = example_from_json(parse_jsonl_object(line, "x:1"), "x:1");
  EXPECT_EQ(back.context, e.context);
  EXPECT_EQ(back.question, e.question);
  EXPECT_EQ(back.answer, e.answer);
  EXPECT_EQ(back.length_tokens, e.length_tokens);
  EXPECT_DOUBLE_EQ(back.depth, e.depth);
}

}  // namespace
}  // namespace swarmt::data
