#include "swarmt/report/markdown_table.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "swarmt/core/error.h"

namespace swarmt {

std::string markdown_cell(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '|') {
      out += "\\|";
    } else if (c == '\n' || c == '\r') {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

std::string format_fixed(double value, int decimals) {
  if (std::isnan(value)) return "-";
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", decimals, value);
  return buf;
}

MarkdownTable::MarkdownTable(std::vector<std::string> headers, std::vector<ColumnAlign> alignments)
    : headers_(std::move(headers)), alignments_(std::move(alignments)) {
  SWARMT_CHECK(!headers_.empty(), "a table needs at least one column");
  if (alignments_.empty()) {
    alignments_.assign(headers_.size(), ColumnAlign::Right);
    alignments_[0] = ColumnAlign::Left;
  }
  SWARMT_CHECK(alignments_.size() == headers_.size(), "one alignment per column");
}

void MarkdownTable::add_row(std::vector<std::string> cells) {
  SWARMT_CHECK(cells.size() == headers_.size(), "row has ", cells.size(), " cells, table has ",
               headers_.size(), " columns");
  rows_.push_back(std::move(cells));
}

namespace {

// Display width of UTF-8 text: counts code points (not bytes), so "×" pads like one character.
size_t display_width(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s)
    if ((c & 0xC0) != 0x80) ++n;
  return n;
}

std::string pad(const std::string& s, size_t width, ColumnAlign align) {
  size_t w = display_width(s);
  if (w >= width) return s;
  size_t missing = width - w;
  switch (align) {
    case ColumnAlign::Left:
      return s + std::string(missing, ' ');
    case ColumnAlign::Right:
      return std::string(missing, ' ') + s;
    case ColumnAlign::Center:
      return std::string(missing / 2, ' ') + s + std::string(missing - missing / 2, ' ');
  }
  return s;
}

}  // namespace

std::string MarkdownTable::render() const {
  const size_t n = headers_.size();
  std::vector<std::vector<std::string>> escaped_rows;
  escaped_rows.reserve(rows_.size() + 1);
  std::vector<std::string> header_cells;
  for (const auto& h : headers_) header_cells.push_back(markdown_cell(h));
  escaped_rows.push_back(header_cells);
  for (const auto& row : rows_) {
    std::vector<std::string> cells;
    for (const auto& c : row) cells.push_back(markdown_cell(c));
    escaped_rows.push_back(std::move(cells));
  }
  std::vector<size_t> widths(n, 3);  // the separator needs at least "---"
  for (const auto& row : escaped_rows)
    for (size_t i = 0; i < n; ++i) widths[i] = std::max(widths[i], display_width(row[i]));

  auto render_row = [&](const std::vector<std::string>& cells) {
    std::string line = "|";
    for (size_t i = 0; i < n; ++i) line += " " + pad(cells[i], widths[i], alignments_[i]) + " |";
    return line + "\n";
  };

  std::string out = render_row(escaped_rows[0]);
  out += "|";
  for (size_t i = 0; i < n; ++i) {
    std::string dashes(widths[i], '-');
    if (alignments_[i] == ColumnAlign::Right) dashes.back() = ':';
    if (alignments_[i] == ColumnAlign::Center) dashes.front() = dashes.back() = ':';
    out += " " + dashes + " |";
  }
  out += "\n";
  for (size_t r = 1; r < escaped_rows.size(); ++r) out += render_row(escaped_rows[r]);
  return out;
}

}  // namespace swarmt
