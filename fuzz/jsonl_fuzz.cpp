// Fuzzes the JSON Lines reader behind `swarmt data prepare --format jsonl` and the jsonl_qa data source:
// the bytes become a .jsonl file read record by record, each record's "text" field read as a string.
// Every rejection must be BadInput naming the file and the line ("<file>:<line>: ..."), its message must
// be valid UTF-8 (it is printed to a terminal), and what is accepted must be one JSON object per
// non-blank line.
#include <cstdint>
#include <string>

#include "fuzz_harness.h"
#include "swarmt/core/error.h"
#include "swarmt/core/json.h"
#include "swarmt/data/long_context/jsonl.h"
#include "swarmt/tokenizer/utf8.h"

namespace swarmt::fuzz {

void fuzz_one(const uint8_t* data, size_t size) {
  const std::string path = scratch_dir() + "/records.jsonl";
  write_file(path, data, size);
  int64_t records = 0, last_line = 0;
  try {
    data::JsonlReader reader(path);
    Json record;
    while (reader.next(record)) {
      FUZZ_REQUIRE(record.is_object(), "every accepted record is a JSON object");
      FUZZ_REQUIRE(reader.line_number() > last_line, "line numbers increase");
      last_line = reader.line_number();
      ++records;
      JsonView view(record, reader.where());
      if (view.has("text")) view.get_string("text");
    }
  } catch (const Error& e) {
    const std::string message = e.what();
    if (e.kind() != ErrorKind::BadInput || message.rfind(path + ":", 0) != 0) throw;
    FUZZ_REQUIRE(!tokenizer::find_invalid_utf8(message).has_value(), "error messages are UTF-8: " + message);
  }
  FUZZ_REQUIRE(records <= static_cast<int64_t>(size), "no more records than bytes");
}

void write_seeds(const SeedWriter& seeds) {
  seeds.add("two_records.jsonl", "{\"text\": \"first document\"}\n{\"text\": \"second\", \"id\": 2}\n");
  seeds.add("bom_crlf_blank.jsonl", "\xEF\xBB\xBF{\"text\": \"a\"}\r\n\r\n   \n{\"text\": \"b\\u00e9\"}");
  seeds.add("qa_example.jsonl",
            "{\"id\": \"long_qa/in/0\", \"task\": \"long_qa\", \"bucket\": \"in\", \"length_tokens\": 40, "
            "\"context\": \"In 1982, the Harbor Office employed 2,083 people.\", \"question\": \"Question: How many "
            "people did the Harbor Office employ in 1982?\\nAnswer:\", \"answer\": \"2,083\", \"depth\": 0}\n");
  seeds.add("nested.jsonl", "{\"text\": \"x\", \"meta\": {\"tags\": [[1], [2, {\"k\": null}]]}}\n");
}

}  // namespace swarmt::fuzz
