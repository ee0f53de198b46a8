// Markdown (GitHub-flavoured) tables for reports: evaluation summaries, run comparisons, benchmarks.
//
// Cells are escaped (a '|' inside a cell would end the cell; a newline would end the row), columns are
// padded so the raw text also reads as a table in a terminal.
#pragma once

#include <string>
#include <vector>

namespace swarmt {

enum class ColumnAlign { Left, Right, Center };

class MarkdownTable {
 public:
  // One header per column; alignments default to Left for the first column and Right for the others
  // (the usual "name | number | number" report layout).
  explicit MarkdownTable(std::vector<std::string> headers, std::vector<ColumnAlign> alignments = {});

  // Appends a row; it must have exactly one cell per column.
  void add_row(std::vector<std::string> cells);

  size_t num_rows() const { return rows_.size(); }
  size_t num_columns() const { return headers_.size(); }

  // The table as Markdown text, ending with a newline.
  std::string render() const;

 private:
  std::vector<std::string> headers_;
  std::vector<ColumnAlign> alignments_;
  std::vector<std::vector<std::string>> rows_;
};

// Escapes a string for use inside a Markdown table cell ('|' -> "\|", newlines -> spaces).
std::string markdown_cell(const std::string& text);

// Fixed-point text with `decimals` digits ("83.25"); NaN renders as "-" (no data).
std::string format_fixed(double value, int decimals);

}  // namespace swarmt
