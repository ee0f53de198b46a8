// `swarmt report table`: the experiment scripts render their tables through the engine's one markdown
// writer; bad JSON exits 2 naming the field.
#include <gtest/gtest.h>

#include <string>

#include "test_util.h"

namespace swarmt::report_table_cli_test {

using testing::run_shell;
using testing::TempDir;
using testing::write_file;

std::string swarmt_cmd() { return std::string(SWARMT_BINARY) + " -q report table"; }

TEST(ReportTableCli, renders_json_rows_as_the_engines_markdown_table) {
  auto r = run_shell("echo '{\"header\": [\"model\", \"1T\"], \"rows\": [[\"ARMT\", 100], [\"base, last T\", \"43.5\"]]}' | " +
                     swarmt_cmd());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "| model        |   1T |\n"
            "| ------------ | ---: |\n"
            "| ARMT         |  100 |\n"
            "| base, last T | 43.5 |\n");
}

TEST(ReportTableCli, bad_tables_exit_2_naming_the_field) {
  TempDir tmp;
  const std::pair<const char*, const char*> cases[] = {
      {R"({"header": ["a", "b"], "rows": [["x"]]})", "rows[0]"},
      {R"({"header": [], "rows": []})", "header"},
      {R"({"header": ["a"], "rows": [[{"x": 1}]]})", "rows[0][0]"},
      {R"({"header": ["a"], "rows": [], "colour": 1})", "colour"},
      {R"([1, 2])", "expected an object"},
  };
  for (const auto& [json, named] : cases) {
    write_file(tmp.file("t.json"), json);
    auto r = run_shell(swarmt_cmd() + " --json " + tmp.file("t.json"));
    EXPECT_EQ(r.exit_code, 2) << json;
    EXPECT_NE(r.err.find(named), std::string::npos) << json << "\n" << r.err;
  }
}

}  // namespace swarmt::report_table_cli_test
