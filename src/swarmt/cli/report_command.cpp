// `swarmt report table`: a markdown table from JSON, rendered by the same writer as every report of the
// engine (report/markdown_table.h), so that the experiment scripts' reports look like the engine's own.
//
//   swarmt report table [--json FILE]        (standard input by default)
//   {"header": ["model", "1T", "2T"], "rows": [["ARMT", "100", "41"], ...]}
//
// Cells are strings or numbers (numbers printed as JSON prints them). The first column is left-aligned and
// the others right-aligned, as in the engine's reports. Every row must have one cell per header.
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <sstream>

#include "swarmt/cli/command.h"
#include "swarmt/core/error.h"
#include "swarmt/core/json.h"
#include "swarmt/report/markdown_table.h"

namespace swarmt::cli {
namespace {

struct ReportTableOptions {
  std::string json_file;
};

std::string cell_text(const Json& cell, const std::string& where) {
  if (cell.is_string()) return cell.get<std::string>();
  if (cell.is_number()) return cell.dump();
  throw_input_error(where, " must be a string or a number, got ", json_preview(cell));
}

int run_report_table(const ReportTableOptions& o) {
  std::string text;
  std::string source = "standard input";
  if (o.json_file.empty()) {
    text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  } else {
    std::ifstream in(o.json_file, std::ios::binary);
    SWARMT_CHECK_INPUT(in.good(), o.json_file, ": cannot open for reading");
    std::ostringstream buffer;
    buffer << in.rdbuf();
    text = buffer.str();
    source = o.json_file;
  }
  const Json json = parse_json(text, source);
  SWARMT_CHECK_INPUT(json.is_object(), source, ": expected an object with \"header\" and \"rows\"");
  const JsonView v(json, source);
  v.reject_unknown_keys({"header", "rows"});
  const std::vector<std::string> header = v.get_string_list("header");
  SWARMT_CHECK_INPUT(!header.empty(), v.describe("header"), " must name at least one column");
  SWARMT_CHECK_INPUT(v.raw("rows").is_array(), v.describe("rows"), " must be a list of rows");
  MarkdownTable table(header);
  const Json& rows = v.raw("rows");
  for (size_t r = 0; r < rows.size(); ++r) {
    const std::string where = v.describe(str_cat("rows[", r, "]"));
    SWARMT_CHECK_INPUT(rows[r].is_array() && rows[r].size() == header.size(), where, " must be a list of ",
                       header.size(), " cells (one per header), got ", json_preview(rows[r]));
    std::vector<std::string> cells;
    for (size_t c = 0; c < rows[r].size(); ++c)
      cells.push_back(cell_text(rows[r][c], v.describe(str_cat("rows[", r, "][", c, "]"))));
    table.add_row(std::move(cells));
  }
  std::cout << table.render();
  return 0;
}

}  // namespace

void register_report(CLI::App& app, const GlobalOptions&, CommandList& commands) {
  CLI::App* report = app.add_subcommand("report", "Render report pieces (markdown tables) the way swarmt's reports do");
  report->require_subcommand(1);
  auto o = std::make_shared<ReportTableOptions>();
  CLI::App* table = report->add_subcommand("table", "A markdown table from JSON {\"header\": [...], \"rows\": [[...]]}");
  table->add_option("--json", o->json_file, "JSON file (default: standard input)");
  commands.push_back({table, [o]() { return run_report_table(*o); }});
}

}  // namespace swarmt::cli
