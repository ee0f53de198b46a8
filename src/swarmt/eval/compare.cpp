#include "swarmt/eval/compare.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <set>

#include "swarmt/core/atomic_file.h"
#include "swarmt/core/error.h"
#include "swarmt/report/markdown_table.h"
#include "swarmt/report/svg_plot.h"

namespace fs = std::filesystem;

namespace swarmt::eval {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double cell(const RunSummary& run, const std::string& variant, int64_t length) {
  auto it = run.aggregates.by_variant_length.find({variant, length});
  return it == run.aggregates.by_variant_length.end() ? kNaN : it->second.mean;
}

MeanScore length_score(const RunSummary& run, int64_t length) {
  auto it = run.aggregates.by_length.find(length);
  return it == run.aggregates.by_length.end() ? MeanScore{kNaN, 0} : it->second;
}

std::string cell_text(const RunSummary& run, const std::string& variant, int64_t length) {
  auto it = run.aggregates.by_variant_length.find({variant, length});
  return it == run.aggregates.by_variant_length.end() ? format_fixed(kNaN, 2) : format_score(it->second);
}

// What a sample's `length` measures, from the runs' metadata ("context length" unless all runs say
// otherwise, e.g. "distance" for `eval recall`).
std::string length_name(const std::vector<RunSummary>& runs) {
  std::string name;
  for (const auto& run : runs) {
    const Json& m = run.metadata;
    std::string n = m.is_object() && m.contains("length_name") && m["length_name"].is_string()
                        ? m["length_name"].get<std::string>() : "context length";
    if (name.empty()) name = n;
    if (name != n) return "context length";
  }
  return name.empty() ? "context length" : name;
}

// The runs' plot marks (window, training length), each distinct (x, label) once.
std::vector<VerticalMark> plot_marks(const std::vector<RunSummary>& runs) {
  std::vector<VerticalMark> marks;
  for (const auto& run : runs) {
    const Json& m = run.metadata;
    if (!m.is_object() || !m.contains("plot_marks") || !m["plot_marks"].is_array()) continue;
    for (const auto& mark : m["plot_marks"]) {
      if (!mark.is_object() || !mark.contains("x") || !mark["x"].is_number() || !mark.contains("label") ||
          !mark["label"].is_string())
        continue;
      VerticalMark v{mark["x"].get<double>(), mark["label"].get<std::string>()};
      if (std::none_of(marks.begin(), marks.end(), [&](const VerticalMark& o) { return o.x == v.x && o.label == v.label; }))
        marks.push_back(v);
    }
  }
  return marks;
}

// Union of the runs' variants (first-seen order) and lengths (ascending).
void union_axes(const std::vector<RunSummary>& runs, std::vector<std::string>& variants,
                std::vector<int64_t>& lengths) {
  std::set<int64_t> all_lengths;
  for (const auto& run : runs) {
    for (const auto& v : run.aggregates.variants)
      if (std::find(variants.begin(), variants.end(), v) == variants.end()) variants.push_back(v);
    for (const auto& [len, m] : run.aggregates.by_length) all_lengths.insert(len);
    for (int64_t len : run.aggregates.lengths) all_lengths.insert(len);
  }
  lengths.assign(all_lengths.begin(), all_lengths.end());
}

}  // namespace

RunSummary read_run_summary(const std::string& run_directory) {
  std::string path = run_directory + "/summary.json";
  std::error_code ec;
  if (!fs::exists(path, ec)) path = run_directory + "/results.json";
  SWARMT_CHECK_INPUT(fs::exists(path, ec), run_directory,
                     ": not an evaluation run directory (no summary.json or results.json)");
  Json json = read_json_file(path);
  SWARMT_CHECK_INPUT(json.is_object(), path, ": must be a JSON object");
  JsonView view(json, path);
  std::string format = view.get_string("format");
  SWARMT_CHECK_INPUT(format == "swarmt-eval-summary" || format == "swarmt-eval-results", path,
                     ": field 'format' must be swarmt-eval-summary or swarmt-eval-results (got \"", format, "\")");
  RunSummary run;
  run.directory = run_directory;
  run.metadata = view.has("metadata") ? view.raw("metadata") : Json::object();
  run.aggregates = aggregates_from_json(view.raw("aggregates"), path);
  if (run.metadata.is_object() && run.metadata.contains("run_name") && run.metadata["run_name"].is_string()) {
    run.name = run.metadata["run_name"].get<std::string>();
  } else {
    fs::path p = fs::path(run_directory).lexically_normal();
    run.name = (p.has_filename() ? p.filename() : p.parent_path().filename()).string();
  }
  if (run.name.empty()) run.name = run_directory;
  return run;
}

std::string comparison_table(const std::vector<RunSummary>& runs) {
  std::vector<std::string> variants;
  std::vector<int64_t> lengths;
  union_axes(runs, variants, lengths);
  const std::string x_name = length_name(runs);
  std::vector<std::string> headers = {"variant", x_name == "context length" ? "length" : x_name};
  for (const auto& run : runs) headers.push_back(run.name);
  std::vector<ColumnAlign> align(headers.size(), ColumnAlign::Right);
  align[0] = ColumnAlign::Left;
  MarkdownTable table(headers, align);
  for (const auto& variant : variants) {
    for (int64_t len : lengths) {
      std::vector<std::string> row = {variant, length_label(len)};
      bool any = false;
      for (const auto& run : runs) {
        any = any || std::isfinite(cell(run, variant, len));
        row.push_back(cell_text(run, variant, len));
      }
      if (any) table.add_row(row);
    }
  }
  for (int64_t len : lengths) {
    std::vector<std::string> row = {"average", length_label(len)};
    for (const auto& run : runs) row.push_back(format_score(length_score(run, len)));
    table.add_row(row);
  }
  std::vector<std::string> overall = {"average", "all"};
  for (const auto& run : runs) overall.push_back(format_fixed(run.aggregates.overall, 2));
  table.add_row(overall);
  return table.render();
}

std::vector<RunSummary> write_comparison(const std::vector<std::string>& run_directories,
                                         const std::string& out_directory, const CompareOptions& options) {
  SWARMT_CHECK_INPUT(!run_directories.empty(), "eval compare: give at least one run directory");
  std::vector<RunSummary> runs;
  std::map<std::string, int> seen;
  for (const auto& dir : run_directories) {
    RunSummary run = read_run_summary(dir);
    int n = ++seen[run.name];
    if (n > 1) run.name += " (" + std::to_string(n) + ")";
    runs.push_back(std::move(run));
  }
  std::vector<std::string> variants;
  std::vector<int64_t> lengths;
  union_axes(runs, variants, lengths);

  std::error_code ec;
  fs::create_directories(out_directory, ec);
  SWARMT_CHECK_INPUT(fs::is_directory(out_directory), out_directory, ": cannot create the output directory (",
                     ec.message(), ")");

  const std::string x_name = length_name(runs);
  LinePlot plot;
  plot.title = options.title + ": mean score vs " + x_name;
  plot.x_label = x_name + " (tokens)";
  plot.y_label = "mean score over variants (0-100)";
  plot.y_min = 0;
  plot.y_max = 100;
  plot.marks = plot_marks(runs);
  for (const auto& run : runs) {
    LineSeries series;
    series.name = run.name;
    for (int64_t len : lengths) {
      const MeanScore score = length_score(run, len);
      series.x.push_back(static_cast<double>(len));
      series.y.push_back(score.mean);
      series.low.push_back(score.has_interval() ? score.low : kNaN);
      series.high.push_back(score.has_interval() ? score.high : kNaN);
    }
    plot.series.push_back(std::move(series));
  }
  write_file_atomically(out_directory + "/compare.svg", render_line_plot(plot));

  std::string md = "# " + options.title + "\n\n";
  for (const auto& run : runs) md += "- " + run.name + ": " + run.directory + "\n";
  md += "\nMean score (0-100) per variant and " + x_name +
        "; `average` is the mean over variants. In brackets: 95 % Wilson intervals, where every score is right or "
        "wrong.\n\n";
  md += comparison_table(runs) + "\n![mean score vs " + x_name + "](compare.svg)\n";
  write_file_atomically(out_directory + "/compare.md", md);

  Json j = {{"format", "swarmt-eval-compare"}, {"version", 1}};
  Json list = Json::array();
  for (const auto& run : runs) {
    list.push_back({{"name", run.name},
                    {"directory", run.directory},
                    {"metadata", run.metadata},
                    {"aggregates", aggregates_to_json(run.aggregates)}});
  }
  j["runs"] = list;
  write_file_atomically(out_directory + "/compare.json", j.dump(1) + "\n");
  return runs;
}

}  // namespace swarmt::eval
