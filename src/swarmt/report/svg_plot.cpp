#include "swarmt/report/svg_plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "swarmt/core/error.h"

namespace swarmt {
namespace {

// Compact number for coordinates: at most 2 decimals, no trailing zeros ("12", "12.5", "-3.25").
std::string num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.2f", v);
  std::string s = buf;
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  if (s == "-0") s = "0";
  return s;
}

std::string attr(const std::string& name, const std::string& value) {
  return " " + name + "=\"" + xml_escape(value) + "\"";
}

std::string tick_label(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%g", std::fabs(v) < 1e-12 ? 0.0 : v);
  return buf;
}

// Rough text width for layout (the SVG is rendered with the viewer's sans-serif font).
double text_width(const std::string& s, double font_size) { return 0.6 * font_size * static_cast<double>(s.size()); }

}  // namespace

std::string xml_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r') break;
        out += c;
    }
  }
  return out;
}

SvgWriter::SvgWriter(double width, double height) : width_(width), height_(height) {}

void SvgWriter::rect(double x, double y, double w, double h, const std::string& fill, const std::string& stroke,
                     double stroke_width) {
  body_ += "<rect" + attr("x", num(x)) + attr("y", num(y)) + attr("width", num(w)) + attr("height", num(h)) +
           attr("fill", fill);
  if (stroke != "none") body_ += attr("stroke", stroke) + attr("stroke-width", num(stroke_width));
  body_ += "/>\n";
}

void SvgWriter::line(double x1, double y1, double x2, double y2, const std::string& stroke, double stroke_width,
                     const std::string& dash) {
  body_ += "<line" + attr("x1", num(x1)) + attr("y1", num(y1)) + attr("x2", num(x2)) + attr("y2", num(y2)) +
           attr("stroke", stroke) + attr("stroke-width", num(stroke_width));
  if (!dash.empty()) body_ += attr("stroke-dasharray", dash);
  body_ += "/>\n";
}

void SvgWriter::polyline(const std::vector<double>& xs, const std::vector<double>& ys, const std::string& stroke,
                         double stroke_width, const std::string& dash) {
  SWARMT_CHECK(xs.size() == ys.size());
  std::string points;
  for (size_t i = 0; i < xs.size(); ++i) points += (i ? " " : "") + num(xs[i]) + "," + num(ys[i]);
  body_ += "<polyline" + attr("points", points) + attr("fill", "none") + attr("stroke", stroke) +
           attr("stroke-width", num(stroke_width)) + attr("stroke-linejoin", "round");
  if (!dash.empty()) body_ += attr("stroke-dasharray", dash);
  body_ += "/>\n";
}

void SvgWriter::circle(double cx, double cy, double r, const std::string& fill) {
  body_ += "<circle" + attr("cx", num(cx)) + attr("cy", num(cy)) + attr("r", num(r)) + attr("fill", fill) + "/>\n";
}

void SvgWriter::text(double x, double y, const std::string& content, double font_size, const std::string& anchor,
                     const std::string& fill, bool bold, double rotate_deg) {
  body_ += "<text" + attr("x", num(x)) + attr("y", num(y)) + attr("font-size", num(font_size)) +
           attr("text-anchor", anchor) + attr("fill", fill);
  if (bold) body_ += attr("font-weight", "bold");
  if (rotate_deg != 0.0) body_ += attr("transform", "rotate(" + num(rotate_deg) + " " + num(x) + " " + num(y) + ")");
  body_ += ">" + xml_escape(content) + "</text>\n";
}

void SvgWriter::vertical_gradient(const std::string& id, const std::vector<std::string>& colours_bottom_to_top) {
  SWARMT_CHECK(colours_bottom_to_top.size() >= 2);
  defs_ += "<linearGradient" + attr("id", id) + attr("x1", "0") + attr("y1", "1") + attr("x2", "0") +
           attr("y2", "0") + ">\n";
  for (size_t i = 0; i < colours_bottom_to_top.size(); ++i) {
    double offset = static_cast<double>(i) / static_cast<double>(colours_bottom_to_top.size() - 1);
    defs_ += "<stop" + attr("offset", num(offset)) + attr("stop-color", colours_bottom_to_top[i]) + "/>\n";
  }
  defs_ += "</linearGradient>\n";
}

void SvgWriter::title(const std::string& content) { body_ = "<title>" + xml_escape(content) + "</title>\n" + body_; }

std::string SvgWriter::finish() const {
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\"" + attr("width", num(width_)) +
         attr("height", num(height_)) + attr("viewBox", "0 0 " + num(width_) + " " + num(height_)) +
         attr("font-family", "Helvetica, Arial, sans-serif") + ">\n";
  if (!defs_.empty()) out += "<defs>\n" + defs_ + "</defs>\n";
  out += body_;
  out += "</svg>\n";
  return out;
}

std::vector<double> nice_ticks(double lo, double hi, int target_count) {
  SWARMT_CHECK(std::isfinite(lo) && std::isfinite(hi));
  if (hi < lo) std::swap(lo, hi);
  if (hi == lo) {
    double pad = lo == 0.0 ? 1.0 : std::fabs(lo) * 0.1;
    lo -= pad;
    hi += pad;
  }
  target_count = std::max(2, target_count);
  // step = {1, 2, 5} x 10^k, the smallest that gives at most target_count intervals.
  double raw = (hi - lo) / target_count;
  double power = std::pow(10.0, std::floor(std::log10(raw)));
  double step = power * 10;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * power >= raw) {
      step = m * power;
      break;
    }
  }
  std::vector<double> ticks;
  double first = std::floor(lo / step + 1e-9) * step;
  for (int k = 0; k <= 1000; ++k) {
    double t = first + k * step;
    ticks.push_back(std::fabs(t) < step * 1e-9 ? 0.0 : t);
    if (t >= hi - step * 1e-9) break;
  }
  return ticks;
}

std::string format_length_label(double value) {
  char buf[64];
  auto whole = [](double v) { return std::fabs(v - std::round(v)) < 1e-9; };
  if (value >= 1048576 && whole(value / 1048576)) {
    std::snprintf(buf, sizeof(buf), "%gM", value / 1048576);
  } else if (value >= 1024 && whole(value / 1024)) {
    std::snprintf(buf, sizeof(buf), "%gk", value / 1024);
  } else {
    std::snprintf(buf, sizeof(buf), "%g", value);
  }
  return buf;
}

std::string series_colour(size_t index) {
  static const char* const kPalette[] = {"#2f6db5", "#e0702a", "#3c9a48", "#c93a3c", "#8862b5",
                                         "#8b5a43", "#d35fae", "#6c6c6c", "#a8a52b", "#2aa7bd"};
  return kPalette[index % 10];
}

std::string heat_colour(double t) {
  // Red -> orange -> pale yellow -> light green -> green: low scores read as warnings at a glance.
  static const double kAnchors[][3] = {
      {204, 51, 45}, {240, 140, 80}, {250, 222, 135}, {200, 230, 130}, {120, 195, 100}, {30, 140, 75}};
  constexpr int kLast = 5;
  if (!std::isfinite(t)) t = 0.0;
  t = std::clamp(t, 0.0, 1.0) * kLast;
  int i = std::min(static_cast<int>(t), kLast - 1);
  double f = t - i;
  char buf[16];
  int rgb[3];
  for (int c = 0; c < 3; ++c)
    rgb[c] = static_cast<int>(std::lround(kAnchors[i][c] + f * (kAnchors[i + 1][c] - kAnchors[i][c])));
  std::snprintf(buf, sizeof(buf), "#%02x%02x%02x", rgb[0], rgb[1], rgb[2]);
  return buf;
}

std::string render_line_plot(const LinePlot& plot) {
  // Data ranges over finite points.
  double x_lo = std::numeric_limits<double>::infinity(), x_hi = -x_lo;
  double y_lo = x_lo, y_hi = -x_lo;
  for (const auto& s : plot.series) {
    SWARMT_CHECK(s.x.size() == s.y.size(), "series '", s.name, "' has ", s.x.size(), " x and ", s.y.size(),
                 " y values");
    SWARMT_CHECK(s.low.size() == s.high.size() && (s.low.empty() || s.low.size() == s.x.size()), "series '", s.name,
                 "' has intervals for ", s.low.size(), " of ", s.x.size(), " points");
    for (size_t i = 0; i < s.x.size(); ++i) {
      if (!std::isfinite(s.x[i]) || !std::isfinite(s.y[i])) continue;
      SWARMT_CHECK_INPUT(!plot.log2_x || s.x[i] > 0, "plot '", plot.title, "': x value ", s.x[i],
                         " cannot be shown on a log2 axis");
      x_lo = std::min(x_lo, s.x[i]);
      x_hi = std::max(x_hi, s.x[i]);
      y_lo = std::min(y_lo, s.y[i]);
      y_hi = std::max(y_hi, s.y[i]);
    }
  }
  const bool empty = !std::isfinite(x_lo);
  if (empty) {
    x_lo = plot.log2_x ? 1024 : 0;
    x_hi = plot.log2_x ? 4096 : 1;
    y_lo = 0;
    y_hi = 1;
  }
  for (const auto& m : plot.marks) {
    if (!std::isfinite(m.x) || (plot.log2_x && m.x <= 0)) continue;
    x_lo = std::min(x_lo, m.x);
    x_hi = std::max(x_hi, m.x);
  }
  if (plot.y_min) y_lo = *plot.y_min;
  if (plot.y_max) y_hi = *plot.y_max;

  // X axis: exponents of two on a log2 axis, nice ticks otherwise.
  std::vector<double> x_ticks;  // in axis units (log2 exponent or value)
  double ax_lo, ax_hi;
  if (plot.log2_x) {
    ax_lo = std::floor(std::log2(x_lo) + 1e-9);
    ax_hi = std::ceil(std::log2(x_hi) - 1e-9);
    if (ax_hi <= ax_lo) {
      ax_lo -= 1;
      ax_hi += 1;
    }
    int step = static_cast<int>(std::ceil((ax_hi - ax_lo) / 12.0));
    for (double e = ax_lo; e <= ax_hi + 1e-9; e += step) x_ticks.push_back(e);
  } else {
    x_ticks = nice_ticks(x_lo, x_hi, 8);
    ax_lo = x_ticks.front();
    ax_hi = x_ticks.back();
  }
  std::vector<double> y_ticks = nice_ticks(y_lo, y_hi, 6);
  double ay_lo = plot.y_min ? *plot.y_min : y_ticks.front();
  double ay_hi = plot.y_max ? *plot.y_max : y_ticks.back();
  if (ay_hi <= ay_lo) ay_hi = ay_lo + 1;

  // Layout: legend column on the right sized by the longest name.
  double legend_width = 0;
  for (const auto& s : plot.series) legend_width = std::max(legend_width, text_width(s.name, 12));
  legend_width = plot.series.empty() ? 20 : legend_width + 50;
  const double left = 72, top = 46, bottom = 58;
  const double right = std::max(20.0, legend_width);
  const double width = std::max(plot.width, left + right + 200);
  const double plot_w = width - left - right, plot_h = plot.height - top - bottom;
  auto px = [&](double x) {
    double a = plot.log2_x ? std::log2(x) : x;
    return left + (a - ax_lo) / (ax_hi - ax_lo) * plot_w;
  };
  auto py = [&](double y) { return top + plot_h - (y - ay_lo) / (ay_hi - ay_lo) * plot_h; };

  SvgWriter svg(width, plot.height);
  svg.title(plot.title);
  svg.rect(0, 0, width, plot.height, "#ffffff");
  svg.text(width / 2, 26, plot.title, 16, "middle", "#222222", true);

  for (double t : y_ticks) {
    if (t < ay_lo - 1e-9 || t > ay_hi + 1e-9) continue;
    svg.line(left, py(t), left + plot_w, py(t), "#e3e3e3", 1);
    svg.text(left - 8, py(t) + 4, tick_label(t), 11, "end", "#444444");
  }
  for (double t : x_ticks) {
    double x = left + (t - ax_lo) / (ax_hi - ax_lo) * plot_w;
    svg.line(x, top, x, top + plot_h, "#e3e3e3", 1);
    std::string label = plot.log2_x ? format_length_label(std::exp2(t)) : tick_label(t);
    svg.text(x, top + plot_h + 18, label, 11, "middle", "#444444");
  }
  svg.rect(left, top, plot_w, plot_h, "none", "#555555", 1);
  svg.text(left + plot_w / 2, plot.height - 14, plot.x_label, 13, "middle");
  svg.text(18, top + plot_h / 2, plot.y_label, 13, "middle", "#222222", false, -90);
  if (empty) svg.text(left + plot_w / 2, top + plot_h / 2, "no data", 14, "middle", "#888888");
  // Vertical marks behind the data, labels stacked at the top so that neighbouring marks stay legible.
  for (size_t m = 0; m < plot.marks.size(); ++m) {
    const auto& mark = plot.marks[m];
    if (!std::isfinite(mark.x) || (plot.log2_x && mark.x <= 0)) continue;
    const double x = px(mark.x);
    svg.line(x, top, x, top + plot_h, "#777777", 1.2, "4,4");
    svg.text(x + 4, top + 14 + 14 * static_cast<double>(m), mark.label, 11, "start", "#555555");
  }

  for (size_t k = 0; k < plot.series.size(); ++k) {
    const auto& s = plot.series[k];
    const std::string colour = s.colour.empty() ? series_colour(k) : s.colour;
    const std::string dash = (s.dashed || k >= 10) ? "6,3" : "";
    std::vector<double> xs, ys;
    auto flush = [&] {
      if (xs.size() >= 2) svg.polyline(xs, ys, colour, 2, dash);
      xs.clear();
      ys.clear();
    };
    for (size_t i = 0; i < s.x.size(); ++i) {
      if (!std::isfinite(s.x[i]) || !std::isfinite(s.y[i])) {
        flush();
        continue;
      }
      if (!s.low.empty() && std::isfinite(s.low[i]) && std::isfinite(s.high[i])) {
        const double x = px(s.x[i]), y0 = py(std::clamp(s.low[i], ay_lo, ay_hi)), y1 = py(std::clamp(s.high[i], ay_lo, ay_hi));
        svg.line(x, y0, x, y1, colour, 1.5);
        svg.line(x - 4, y0, x + 4, y0, colour, 1.5);
        svg.line(x - 4, y1, x + 4, y1, colour, 1.5);
      }
      xs.push_back(px(s.x[i]));
      ys.push_back(py(std::clamp(s.y[i], ay_lo, ay_hi)));
      svg.circle(xs.back(), ys.back(), 3.5, colour);
    }
    flush();
    // Legend entry.
    double ly = top + 10 + 20 * static_cast<double>(k);
    double lx = left + plot_w + 16;
    svg.line(lx, ly, lx + 22, ly, colour, 2.5, dash);
    svg.circle(lx + 11, ly, 3.5, colour);
    svg.text(lx + 30, ly + 4, s.name, 12);
  }
  return svg.finish();
}

std::string render_heatmap(const Heatmap& heatmap) {
  const size_t rows = heatmap.row_labels.size(), cols = heatmap.column_labels.size();
  SWARMT_CHECK(heatmap.values.size() == rows, "heatmap has ", heatmap.values.size(), " value rows for ", rows,
               " row labels");
  for (const auto& r : heatmap.values) SWARMT_CHECK(r.size() == cols, "heatmap row has ", r.size(), " values");
  double row_label_width = 0;
  for (const auto& l : heatmap.row_labels) row_label_width = std::max(row_label_width, text_width(l, 11));
  const double left = 44 + row_label_width, top = 46, legend_w = 110, bottom = 56;
  const double grid_w = heatmap.cell_width * static_cast<double>(std::max<size_t>(cols, 1));
  const double grid_h = heatmap.cell_height * static_cast<double>(std::max<size_t>(rows, 1));
  const double width = std::max(left + grid_w + legend_w, text_width(heatmap.title, 16) + 40);
  const double height = top + std::max(grid_h, 160.0) + bottom;
  const double range = heatmap.value_max > heatmap.value_min ? heatmap.value_max - heatmap.value_min : 1.0;

  SvgWriter svg(width, height);
  svg.title(heatmap.title);
  svg.rect(0, 0, width, height, "#ffffff");
  svg.text(width / 2, 26, heatmap.title, 16, "middle", "#222222", true);

  for (size_t r = 0; r < rows; ++r) {
    double y = top + heatmap.cell_height * static_cast<double>(r);
    svg.text(left - 6, y + heatmap.cell_height / 2 + 4, heatmap.row_labels[r], 11, "end", "#444444");
    for (size_t c = 0; c < cols; ++c) {
      double x = left + heatmap.cell_width * static_cast<double>(c);
      double v = heatmap.values[r][c];
      if (!std::isfinite(v)) {
        svg.rect(x, y, heatmap.cell_width, heatmap.cell_height, "#eeeeee", "#ffffff", 1);
        svg.text(x + heatmap.cell_width / 2, y + heatmap.cell_height / 2 + 4, "-", 11, "middle", "#999999");
        continue;
      }
      double t = (v - heatmap.value_min) / range;
      svg.rect(x, y, heatmap.cell_width, heatmap.cell_height, heat_colour(t), "#ffffff", 1);
      char buf[64];
      std::snprintf(buf, sizeof(buf), "%.*f", heatmap.decimals, v);
      // Every colour of the scale is light enough for dark text except the deep ends.
      std::string ink = (t < 0.12 || t > 0.9) ? "#ffffff" : "#1a1a1a";
      svg.text(x + heatmap.cell_width / 2, y + heatmap.cell_height / 2 + 4, buf, 11, "middle", ink);
    }
  }
  for (size_t c = 0; c < cols; ++c) {
    double x = left + heatmap.cell_width * (static_cast<double>(c) + 0.5);
    svg.text(x, top + grid_h + 16, heatmap.column_labels[c], 11, "middle", "#444444");
  }
  svg.text(left + grid_w / 2, top + grid_h + 38, heatmap.x_label, 13, "middle");
  svg.text(16, top + grid_h / 2, heatmap.y_label, 13, "middle", "#222222", false, -90);

  // Colour legend: a gradient bar with the range at its ends and the middle.
  std::vector<std::string> stops;
  for (int i = 0; i <= 10; ++i) stops.push_back(heat_colour(i / 10.0));
  svg.vertical_gradient("heat-scale", stops);
  const double bar_x = left + grid_w + 24, bar_h = std::max(grid_h, 160.0) - 20, bar_y = top + 10;
  svg.rect(bar_x, bar_y, 14, bar_h, "url(#heat-scale)", "#777777", 0.5);
  for (int i = 0; i <= 2; ++i) {
    double v = heatmap.value_min + range * i / 2.0;
    double y = bar_y + bar_h - bar_h * i / 2.0;
    svg.line(bar_x + 14, y, bar_x + 18, y, "#555555", 1);
    svg.text(bar_x + 21, y + 4, tick_label(v), 10, "start", "#444444");
  }
  svg.text(bar_x, bar_y - 2 + bar_h + 18, heatmap.value_label, 11, "start", "#444444");
  return svg.finish();
}

}  // namespace swarmt
