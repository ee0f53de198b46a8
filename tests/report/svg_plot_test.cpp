#include "swarmt/report/svg_plot.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "eval/xml_check.h"
#include "swarmt/core/error.h"

namespace swarmt {
namespace {

using swarmt::testing::check_xml;

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

LineSeries series(const std::string& name, std::vector<double> x, std::vector<double> y) {
  LineSeries s;
  s.name = name;
  s.x = std::move(x);
  s.y = std::move(y);
  return s;
}

LinePlot two_series_plot() {
  LinePlot plot;
  plot.title = "NIAH <score> & length";
  plot.x_label = "context length (tokens)";
  plot.y_label = "score";
  plot.y_min = 0;
  plot.y_max = 100;
  plot.series.push_back(series("niah_single_1", {4096, 8192, 16384, 131072}, {100, 95.5, 80, 12}));
  plot.series.push_back(series("run \"b\"", {4096, 8192, 16384, 131072}, {90, std::nan(""), 70, 5}));
  plot.series.back().dashed = true;
  return plot;
}

TEST(SvgPlot, line_plot_is_well_formed_xml_with_axes_legend_and_series) {
  std::string svg = render_line_plot(two_series_plot());
  auto check = check_xml(svg);
  ASSERT_EQ(check.error, "") << svg;
  EXPECT_EQ(check.element_count["svg"], 1);
  // Series 1 is one polyline; series 2 is broken by its NaN into a 1-point piece (no line) and a
  // 2-point line.
  EXPECT_EQ(check.element_count["polyline"], 2);
  EXPECT_EQ(check.element_count["circle"], 4 + 3 + 2);  // points + one marker per legend entry
  EXPECT_TRUE(contains(svg, ">niah_single_1</text>"));
  EXPECT_TRUE(contains(svg, ">run &quot;b&quot;</text>"));
  EXPECT_TRUE(contains(svg, "NIAH &lt;score&gt; &amp; length"));
  EXPECT_TRUE(contains(svg, ">context length (tokens)</text>"));
  EXPECT_TRUE(contains(svg, "stroke-dasharray=\"6,3\""));  // the dashed series
}

TEST(SvgPlot, intervals_are_drawn_as_capped_bars_and_marks_as_labelled_lines) {
  LinePlot plot = two_series_plot();
  auto plain = check_xml(render_line_plot(plot));
  plot.marks = {{4096 * 3, "window 12k"}, {65536, "training length 64k"}};  // inside the data's x range
  auto marked = check_xml(render_line_plot(plot));
  EXPECT_EQ(marked.element_count["line"], plain.element_count["line"] + 2);  // one line per mark
  plot.series[0].low = {90, 85, std::nan(""), 5};
  plot.series[0].high = {100, 99, std::nan(""), 20};
  std::string svg = render_line_plot(plot);
  auto check = check_xml(svg);
  ASSERT_EQ(check.error, "") << svg;
  // Three points with intervals, three lines each (bar and two caps).
  EXPECT_EQ(check.element_count["line"], marked.element_count["line"] + 3 * 3);
  EXPECT_TRUE(contains(svg, ">window 12k</text>"));
  EXPECT_TRUE(contains(svg, ">training length 64k</text>"));
  plot.marks = {{64, "window 64"}};
  EXPECT_TRUE(contains(render_line_plot(plot), ">64</text>"));  // the x axis reaches down to a mark
}

TEST(SvgPlot, log2_axis_is_labelled_at_powers_of_two) {
  std::string svg = render_line_plot(two_series_plot());
  for (const char* label : {">4k<", ">8k<", ">16k<", ">32k<", ">64k<", ">128k<"})
    EXPECT_TRUE(contains(svg, label)) << label;
  for (const char* label : {">0<", ">20<", ">100<"}) EXPECT_TRUE(contains(svg, label)) << label;
}

TEST(SvgPlot, non_positive_x_on_a_log_axis_is_rejected) {
  LinePlot plot;
  plot.series.push_back(series("bad", {0, 1024}, {1, 2}));
  EXPECT_THROW(render_line_plot(plot), Error);
}

TEST(SvgPlot, empty_plot_still_renders_a_valid_document) {
  LinePlot plot;
  plot.title = "nothing yet";
  std::string svg = render_line_plot(plot);
  EXPECT_EQ(check_xml(svg).error, "");
  EXPECT_TRUE(contains(svg, ">no data</text>"));
}

TEST(SvgPlot, heatmap_prints_values_in_cells_with_a_colour_legend) {
  Heatmap h;
  h.title = "depth x length";
  h.x_label = "context length";
  h.y_label = "depth (%)";
  h.column_labels = {"4k", "8k"};
  h.row_labels = {"0", "50", "100"};
  h.values = {{100, 87.5}, {std::numeric_limits<double>::quiet_NaN(), 50}, {0, 12.25}};
  h.decimals = 1;
  std::string svg = render_heatmap(h);
  auto check = check_xml(svg);
  ASSERT_EQ(check.error, "") << svg;
  EXPECT_EQ(check.element_count["linearGradient"], 1);
  EXPECT_TRUE(contains(svg, "url(#heat-scale)"));
  for (const char* v : {">100.0<", ">87.5<", ">50.0<", ">0.0<", ">12.2<", ">-<"}) EXPECT_TRUE(contains(svg, v)) << v;
  // 6 cells + background + legend bar.
  EXPECT_EQ(check.element_count["rect"], 6 + 2);
}

TEST(SvgPlot, heat_colour_runs_from_red_to_green) {
  EXPECT_EQ(heat_colour(0.0), "#cc332d");
  EXPECT_EQ(heat_colour(1.0), "#1e8c4b");
  EXPECT_EQ(heat_colour(-3.0), heat_colour(0.0));  // clamped
  EXPECT_EQ(heat_colour(std::nan("")), heat_colour(0.0));
}

void expect_ticks(const std::vector<double>& actual, const std::vector<double>& expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) EXPECT_NEAR(actual[i], expected[i], 1e-9) << "tick " << i;
}

TEST(SvgPlot, nice_ticks_use_one_two_five_steps) {
  expect_ticks(nice_ticks(0, 100, 6), {0, 20, 40, 60, 80, 100});
  expect_ticks(nice_ticks(0, 1, 5), {0, 0.2, 0.4, 0.6, 0.8, 1});
  expect_ticks(nice_ticks(3, 47, 4), {0, 20, 40, 60});
}

TEST(SvgPlot, length_labels_use_k_and_m_for_powers_of_two) {
  EXPECT_EQ(format_length_label(512), "512");
  EXPECT_EQ(format_length_label(4096), "4k");
  EXPECT_EQ(format_length_label(131072), "128k");
  EXPECT_EQ(format_length_label(1048576), "1M");
  EXPECT_EQ(format_length_label(1500), "1500");
}

TEST(SvgPlot, xml_escape_handles_markup_and_drops_forbidden_control_characters) {
  EXPECT_EQ(xml_escape("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&apos;");
  EXPECT_EQ(xml_escape(std::string("x\x01y\tz", 5)), "xy\tz");
}

}  // namespace
}  // namespace swarmt
