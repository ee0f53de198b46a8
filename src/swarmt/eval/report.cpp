#include "swarmt/eval/report.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>

#include "swarmt/core/atomic_file.h"
#include "swarmt/core/error.h"
#include "swarmt/eval/wilson_interval.h"
#include "swarmt/report/markdown_table.h"
#include "swarmt/report/svg_plot.h"

namespace fs = std::filesystem;

namespace swarmt::eval {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double round_depth(double depth) { return std::round(depth * 100.0) / 100.0; }

struct Accumulator {
  double sum = 0;
  int64_t count = 0;
  int64_t right = 0;
  bool binary = true;  // every score 0 or 100
  void add(double v) {
    sum += v;
    ++count;
    right += v == 100.0;
    binary = binary && (v == 0.0 || v == 100.0);
  }
  MeanScore mean() const {
    MeanScore m{count ? sum / static_cast<double>(count) : kNaN, count};
    if (binary && count > 0) {
      const Interval ci = wilson_interval(right, count);
      m.successes = right;
      m.low = 100.0 * ci.low;
      m.high = 100.0 * ci.high;
    }
    return m;
  }
};


Json sample_to_json(const EvalSampleResult& s, bool include_prompt) {
  Json j = {{"id", s.id}, {"variant", s.variant}, {"length", s.length}};
  j["depth"] = s.depth ? Json(*s.depth) : Json(nullptr);
  j["token_count"] = s.token_count;
  if (include_prompt) j["prompt"] = s.prompt;
  j["answers"] = s.answers;
  j["prediction"] = s.prediction;
  j["score"] = s.score;
  if (!s.details.is_null()) j["details"] = s.details;
  return j;
}

// Scalar metadata as "- key: value" lines (objects and arrays stay in the JSON files).
std::string metadata_markdown(const Json& metadata) {
  std::string out;
  if (!metadata.is_object()) return out;
  for (const auto& [key, value] : metadata.items()) {
    if (value.is_object() || value.is_array() || value.is_null()) continue;
    out += "- " + key + ": " + (value.is_string() ? value.get<std::string>() : value.dump()) + "\n";
  }
  return out;
}

Heatmap depth_heatmap(const std::string& title, const EvalAggregates& agg,
                      const std::map<std::pair<int64_t, double>, MeanScore>& cells) {
  Heatmap h;
  h.title = title;
  h.x_label = "context length (tokens)";
  h.y_label = "needle depth (%)";
  for (int64_t len : agg.lengths) h.column_labels.push_back(length_label(len));
  for (double d : agg.depths) {
    h.row_labels.push_back(depth_label(agg, d));
    std::vector<double> row;
    for (int64_t len : agg.lengths) {
      auto it = cells.find({len, d});
      row.push_back(it == cells.end() ? kNaN : it->second.mean);
    }
    h.values.push_back(std::move(row));
  }
  h.value_label = "mean score";
  return h;
}

std::string file_safe(const std::string& name) {
  std::string out;
  for (char c : name) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_') ? c : '_';
  return out;
}

}  // namespace

std::string length_label(int64_t length) { return format_length_label(static_cast<double>(length)); }

std::string format_score(const MeanScore& score) {
  if (!score.has_interval()) return format_fixed(score.mean, 2);
  return str_cat(format_fixed(score.mean, 1), " [", format_fixed(score.low, 1), ", ", format_fixed(score.high, 1), "]");
}

std::string depth_label(const EvalAggregates& aggregates, double depth_key) {
  char buf[64];
  if (aggregates.depth_bin_width > 0) {
    std::snprintf(buf, sizeof(buf), "%g-%g", depth_key, depth_key + aggregates.depth_bin_width);
  } else {
    std::snprintf(buf, sizeof(buf), "%g", depth_key);
  }
  return buf;
}

EvalAggregates aggregate_results(const std::vector<EvalSampleResult>& samples, size_t max_exact_depths) {
  EvalAggregates agg;
  // RULER's random placement gives each sample its own depth: bin them when a table would be too long.
  std::set<double> distinct_depths;
  for (const auto& s : samples)
    if (s.depth) distinct_depths.insert(round_depth(*s.depth));
  if (distinct_depths.size() > max_exact_depths) agg.depth_bin_width = 10;
  auto depth_key = [&](double depth) {
    if (agg.depth_bin_width <= 0) return round_depth(depth);
    return std::clamp(std::floor(depth / agg.depth_bin_width) * agg.depth_bin_width, 0.0, 100.0 - agg.depth_bin_width);
  };
  std::map<std::pair<std::string, int64_t>, Accumulator> vl;
  std::map<std::string, Accumulator> v;
  std::map<std::pair<int64_t, double>, Accumulator> ld;
  std::map<std::string, std::map<std::pair<int64_t, double>, Accumulator>> vld;
  std::set<int64_t> lengths;
  std::set<double> depths;
  for (const auto& s : samples) {
    if (std::find(agg.variants.begin(), agg.variants.end(), s.variant) == agg.variants.end())
      agg.variants.push_back(s.variant);
    lengths.insert(s.length);
    vl[{s.variant, s.length}].add(s.score);
    v[s.variant].add(s.score);
    if (s.depth) {
      double d = depth_key(*s.depth);
      depths.insert(d);
      ld[{s.length, d}].add(s.score);
      vld[s.variant][{s.length, d}].add(s.score);
    }
  }
  agg.lengths.assign(lengths.begin(), lengths.end());
  agg.depths.assign(depths.begin(), depths.end());
  for (const auto& [key, acc] : vl) agg.by_variant_length[key] = acc.mean();
  for (const auto& [key, acc] : v) agg.by_variant[key] = acc.mean();
  for (const auto& [key, acc] : ld) agg.by_length_depth[key] = acc.mean();
  for (const auto& [variant, cells] : vld)
    for (const auto& [key, acc] : cells) agg.by_variant_length_depth[variant][key] = acc.mean();
  // RULER's average at a length is the mean over tasks of the task means (each task weighs the same).
  Accumulator overall;
  for (int64_t len : agg.lengths) {
    Accumulator over_variants;
    int64_t count = 0;
    const MeanScore* only = nullptr;  // the one variant with samples at this length, if there is one
    int64_t variants_here = 0;
    for (const auto& variant : agg.variants) {
      auto it = agg.by_variant_length.find({variant, len});
      if (it == agg.by_variant_length.end()) continue;
      over_variants.add(it->second.mean);
      count += it->second.count;
      only = &it->second;
      ++variants_here;
    }
    agg.by_length[len] = {over_variants.mean().mean, count};
    // With one variant at the length (one task, or a bucket per length) the length's score is that
    // variant's, interval included; a mean over variants is not a proportion of independent trials and
    // gets none.
    if (variants_here == 1) agg.by_length[len] = *only;
    overall.add(agg.by_length[len].mean);
  }
  agg.overall = overall.mean().mean;
  return agg;
}

Json aggregates_to_json(const EvalAggregates& agg) {
  auto num = [](double x) { return std::isfinite(x) ? Json(x) : Json(nullptr); };
  auto with_interval = [](Json j, const MeanScore& m) {
    if (m.has_interval()) {
      j["successes"] = m.successes;
      j["ci95"] = {m.low, m.high};
    }
    return j;
  };
  Json j;
  j["variants"] = agg.variants;
  j["lengths"] = agg.lengths;
  j["depths"] = agg.depths;
  j["depth_bin_width"] = agg.depth_bin_width;
  Json vl = Json::array();
  for (const auto& [key, m] : agg.by_variant_length)
    vl.push_back(with_interval({{"variant", key.first}, {"length", key.second}, {"mean", num(m.mean)}, {"count", m.count}}, m));
  j["by_variant_length"] = vl;
  Json v = Json::array();
  for (const auto& name : agg.variants) {
    auto it = agg.by_variant.find(name);
    if (it == agg.by_variant.end()) continue;
    v.push_back(with_interval({{"variant", name}, {"mean", num(it->second.mean)}, {"count", it->second.count}}, it->second));
  }
  j["by_variant"] = v;
  Json l = Json::array();
  for (const auto& [len, m] : agg.by_length)
    l.push_back(with_interval({{"length", len}, {"mean", num(m.mean)}, {"count", m.count}}, m));
  j["by_length"] = l;
  Json ld = Json::array();
  for (const auto& [key, m] : agg.by_length_depth)
    ld.push_back({{"length", key.first}, {"depth", key.second}, {"mean", num(m.mean)}, {"count", m.count}});
  j["by_length_depth"] = ld;
  j["overall"] = num(agg.overall);
  return j;
}

EvalAggregates aggregates_from_json(const Json& json, const std::string& where) {
  SWARMT_CHECK_INPUT(json.is_object(), where, ": field 'aggregates' must be an object");
  JsonView view(json, where, "aggregates.");
  EvalAggregates agg;
  agg.variants = view.get_string_list("variants");
  agg.lengths = view.get_int_list("lengths");
  auto mean_of = [](const JsonView& item) {
    MeanScore m{item.has("mean") ? item.get_number("mean") : kNaN, item.get_int("count", 0)};
    if (item.has("ci95")) {
      const auto bounds = item.get_number_list("ci95");
      SWARMT_CHECK_INPUT(bounds.size() == 2, item.describe("ci95"), " must be [low, high]");
      m.successes = item.get_int("successes", 0);
      m.low = bounds[0];
      m.high = bounds[1];
    }
    return m;
  };
  const Json& vl = view.raw("by_variant_length");
  SWARMT_CHECK_INPUT(vl.is_array(), view.describe("by_variant_length"), " must be an array");
  for (size_t i = 0; i < vl.size(); ++i) {
    JsonView item(vl[i], where, "aggregates.by_variant_length[" + std::to_string(i) + "].");
    agg.by_variant_length[{item.get_string("variant"), item.get_int("length")}] = mean_of(item);
  }
  const Json& l = view.raw("by_length");
  SWARMT_CHECK_INPUT(l.is_array(), view.describe("by_length"), " must be an array");
  for (size_t i = 0; i < l.size(); ++i) {
    JsonView item(l[i], where, "aggregates.by_length[" + std::to_string(i) + "].");
    agg.by_length[item.get_int("length")] = mean_of(item);
  }
  if (view.has("by_variant")) {
    const Json& v = view.raw("by_variant");
    SWARMT_CHECK_INPUT(v.is_array(), view.describe("by_variant"), " must be an array");
    for (size_t i = 0; i < v.size(); ++i) {
      JsonView item(v[i], where, "aggregates.by_variant[" + std::to_string(i) + "].");
      agg.by_variant[item.get_string("variant")] = mean_of(item);
    }
  }
  if (view.has("depths")) agg.depths = view.get_number_list("depths");
  agg.depth_bin_width = view.get_number("depth_bin_width", 0.0);
  agg.overall = view.has("overall") ? view.get_number("overall") : kNaN;
  return agg;
}


void write_eval_report(const std::string& directory, const EvalRun& run, const ReportOptions& options) {
  std::error_code ec;
  fs::create_directories(directory, ec);
  SWARMT_CHECK_INPUT(fs::is_directory(directory), directory, ": cannot create the report directory (",
                     ec.message(), ")");
  const EvalAggregates agg = aggregate_results(run.samples);
  const Json aggregates = aggregates_to_json(agg);

  Json metadata = run.metadata;
  if (options.length_name != "context length") metadata["length_name"] = options.length_name;
  if (!options.marks.empty()) {
    Json marks = Json::array();
    for (const auto& [x, label] : options.marks) marks.push_back({{"x", x}, {"label", label}});
    metadata["plot_marks"] = marks;
  }
  Json summary = {{"format", "swarmt-eval-summary"}, {"version", 1}};
  summary["metadata"] = metadata;
  summary["num_samples"] = run.samples.size();
  summary["aggregates"] = aggregates;

  Json results = {{"format", "swarmt-eval-results"}, {"version", 1}};
  results["metadata"] = metadata;
  results["aggregates"] = aggregates;
  Json samples = Json::array();
  for (const auto& s : run.samples) samples.push_back(sample_to_json(s, options.include_prompts));
  results["samples"] = std::move(samples);

  // Invalid UTF-8 in a model's prediction must not make the report unwritable: replace it.
  const auto dump = [](const Json& j) { return j.dump(1, ' ', false, Json::error_handler_t::replace) + "\n"; };
  write_file_atomically(directory + "/results.json", dump(results));

  // Plot: one line per variant, plus the average when there are several.
  LinePlot plot;
  plot.title = options.title + ": score vs " + options.length_name;
  plot.x_label = options.length_name + " (tokens)";
  for (const auto& [x, label] : options.marks) plot.marks.push_back({x, label});
  plot.y_label = "mean score (0-100)";
  plot.y_min = 0;
  plot.y_max = 100;
  for (const auto& variant : agg.variants) {
    LineSeries series;
    series.name = variant;
    for (int64_t len : agg.lengths) {
      auto it = agg.by_variant_length.find({variant, len});
      series.x.push_back(static_cast<double>(len));
      series.y.push_back(it == agg.by_variant_length.end() ? kNaN : it->second.mean);
      const bool interval = it != agg.by_variant_length.end() && it->second.has_interval();
      series.low.push_back(interval ? it->second.low : kNaN);
      series.high.push_back(interval ? it->second.high : kNaN);
    }
    plot.series.push_back(std::move(series));
  }
  if (agg.variants.size() > 1) {
    LineSeries average;
    average.name = "average";
    average.colour = "#222222";
    average.dashed = true;
    for (int64_t len : agg.lengths) {
      average.x.push_back(static_cast<double>(len));
      average.y.push_back(agg.by_length.at(len).mean);
    }
    plot.series.push_back(std::move(average));
  }
  write_file_atomically(directory + "/score_vs_length.svg", render_line_plot(plot));

  // Markdown summary.
  std::string md = "# " + options.title + "\n\n" + metadata_markdown(run.metadata);
  md += "- samples: " + std::to_string(run.samples.size()) + "\n";
  md += "- overall mean score: " + format_fixed(agg.overall, 2) + "\n\n";
  md += "## Mean score by variant and " + options.length_name + "\n\n";
  std::vector<std::string> headers = {"variant"};
  for (int64_t len : agg.lengths) headers.push_back(length_label(len));
  headers.push_back("mean");
  MarkdownTable table(headers);
  for (const auto& variant : agg.variants) {
    std::vector<std::string> row = {variant};
    Accumulator over_lengths;
    for (int64_t len : agg.lengths) {
      auto it = agg.by_variant_length.find({variant, len});
      double m = it == agg.by_variant_length.end() ? kNaN : it->second.mean;
      row.push_back(it == agg.by_variant_length.end() ? format_fixed(kNaN, 2) : format_score(it->second));
      if (std::isfinite(m)) over_lengths.add(m);
    }
    row.push_back(format_fixed(over_lengths.mean().mean, 2));
    table.add_row(row);
  }
  if (agg.variants.size() > 1) {
    std::vector<std::string> row = {"average"};
    for (int64_t len : agg.lengths) row.push_back(format_fixed(agg.by_length.at(len).mean, 2));
    row.push_back(format_fixed(agg.overall, 2));
    table.add_row(row);
  }
  md += table.render();
  if (std::any_of(agg.by_variant_length.begin(), agg.by_variant_length.end(), [](const auto& kv) { return kv.second.has_interval(); }))
    md += "\nScores in brackets: 95 % Wilson intervals.\n";
  md += "\n![score vs " + options.length_name + "](score_vs_length.svg)\n";

  if (!agg.depths.empty()) {
    md += "\n## Mean score by needle depth and context length (all variants)\n\n";
    std::vector<std::string> depth_headers = {"depth (%)"};
    for (int64_t len : agg.lengths) depth_headers.push_back(length_label(len));
    MarkdownTable depth_table(depth_headers);
    for (double d : agg.depths) {
      std::vector<std::string> row = {depth_label(agg, d)};
      for (int64_t len : agg.lengths) {
        auto it = agg.by_length_depth.find({len, d});
        row.push_back(format_fixed(it == agg.by_length_depth.end() ? kNaN : it->second.mean, 1));
      }
      depth_table.add_row(row);
    }
    md += depth_table.render() + "\n![score by depth](depth_heatmap.svg)\n";
    write_file_atomically(directory + "/depth_heatmap.svg",
                          render_heatmap(depth_heatmap(options.title + ": score by needle depth", agg,
                                                       agg.by_length_depth)));
    if (agg.by_variant_length_depth.size() > 1) {
      for (const auto& variant : agg.variants) {
        auto found = agg.by_variant_length_depth.find(variant);
        if (found == agg.by_variant_length_depth.end()) continue;
        const auto& cells = found->second;
        std::string file = "depth_heatmap_" + file_safe(variant) + ".svg";
        write_file_atomically(directory + "/" + file,
                              render_heatmap(depth_heatmap(variant + ": score by needle depth", agg, cells)));
        md += "\n![" + variant + " by depth](" + file + ")\n";
      }
    }
  }
  write_file_atomically(directory + "/summary.md", md);
  // Written last: a directory with summary.json holds a complete report (scripts test for it to skip
  // finished evaluations; an interrupted one never has it).
  write_file_atomically(directory + "/summary.json", dump(summary));
}

}  // namespace swarmt::eval
