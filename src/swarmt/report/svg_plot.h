// A small SVG plotting library for reports: line plots (accuracy vs context length, loss curves) and
// heatmaps (accuracy over length x needle depth). No dependencies; the output is a standalone, well-formed
// SVG 1.1 document that browsers, GitHub and image viewers display.
//
// Why our own: the reports are written by the C++ program at the end of a run, on machines without
// Python or plotting libraries, and two chart types with axes, ticks and a legend are a few hundred lines.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace swarmt {

// Low-level builder: appends SVG elements with escaped text and numbers printed compactly.
class SvgWriter {
 public:
  SvgWriter(double width, double height);

  void rect(double x, double y, double w, double h, const std::string& fill, const std::string& stroke = "none",
            double stroke_width = 0.0);
  void line(double x1, double y1, double x2, double y2, const std::string& stroke, double stroke_width = 1.0,
            const std::string& dash = "");
  // A polyline through (xs[i], ys[i]).
  void polyline(const std::vector<double>& xs, const std::vector<double>& ys, const std::string& stroke,
                double stroke_width = 2.0, const std::string& dash = "");
  void circle(double cx, double cy, double r, const std::string& fill);
  // anchor: "start" | "middle" | "end"; rotate_deg rotates the text about (x, y).
  void text(double x, double y, const std::string& content, double font_size = 12.0,
            const std::string& anchor = "start", const std::string& fill = "#222222", bool bold = false,
            double rotate_deg = 0.0);
  // A vertical linear gradient (top = last colour) usable as fill="url(#id)".
  void vertical_gradient(const std::string& id, const std::vector<std::string>& colours_bottom_to_top);
  // A <title> child for the document (shown as tooltip / accessible name).
  void title(const std::string& content);

  // The complete document.
  std::string finish() const;

 private:
  double width_, height_;
  std::string defs_;
  std::string body_;
};

// Escapes &, <, >, " and ' for XML text and attribute values; drops control characters that XML 1.0
// forbids (everything below 0x20 except tab, newline and carriage return).
std::string xml_escape(const std::string& text);

// "Nice" tick values (multiples of 1, 2 or 5 times a power of ten) covering [lo, hi] with about
// `target_count` ticks.
std::vector<double> nice_ticks(double lo, double hi, int target_count);

// Labels for context lengths on a log2 axis: 512 -> "512", 4096 -> "4k", 131072 -> "128k", 1048576 -> "1M".
std::string format_length_label(double value);

// The i-th colour of the categorical palette used for series (cycles after 10).
std::string series_colour(size_t index);

// Colour of the sequential scale at t in [0, 1] (0: red for low accuracy, 1: green for high), "#rrggbb".
std::string heat_colour(double t);

struct LineSeries {
  std::string name;        // legend entry
  std::vector<double> x;   // e.g. context lengths
  std::vector<double> y;   // NaN: no point (the line is broken there)
  std::string colour;      // "#rrggbb"; empty: the palette colour of the series' index
  bool dashed = false;     // e.g. for an average drawn over the per-variant lines
  // Optional interval of each point (e.g. a 95 % confidence interval), drawn as a vertical bar with
  // caps; empty, or NaN at a point: no bar.
  std::vector<double> low, high;
};

// A labelled vertical line across the plot (an attention window, a training length).
struct VerticalMark {
  double x = 0;
  std::string label;
};

struct LinePlot {
  std::string title;
  std::string x_label;
  std::string y_label;
  bool log2_x = true;                // x ticks at powers of two, labelled with format_length_label
  std::optional<double> y_min;       // default: from the data (nice range)
  std::optional<double> y_max;
  double width = 760;
  double height = 440;
  std::vector<LineSeries> series;
  std::vector<VerticalMark> marks;
};

// Renders a line plot with axes, grid, ticks, axis labels, title and a legend on the right.
// Non-positive x values are rejected on a log2 axis (BadInput).
std::string render_line_plot(const LinePlot& plot);

struct Heatmap {
  std::string title;
  std::string x_label;                      // e.g. "context length"
  std::string y_label;                      // e.g. "needle depth (%)"
  std::vector<std::string> column_labels;   // x categories, left to right
  std::vector<std::string> row_labels;      // y categories, top to bottom
  std::vector<std::vector<double>> values;  // [row][column]; NaN: no data (grey cell)
  double value_min = 0.0;                   // colour scale range
  double value_max = 100.0;
  std::string value_label = "score";        // colour legend caption
  int decimals = 0;                         // digits of the values printed in cells
  double cell_width = 60;
  double cell_height = 24;
};

// Renders a heatmap with the values printed in the cells and a colour-scale legend.
std::string render_heatmap(const Heatmap& heatmap);

}  // namespace swarmt
