#include "swarmt/eval/report.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "eval/xml_check.h"
#include "swarmt/core/error.h"
#include "swarmt/report/markdown_table.h"
#include "test_util.h"

namespace swarmt::eval {
namespace {

using swarmt::testing::check_xml;
using swarmt::testing::TempDir;

EvalSampleResult sample(const std::string& variant, int64_t length, double score, std::optional<double> depth = {}) {
  EvalSampleResult s;
  s.variant = variant;
  s.length = length;
  s.score = score;
  s.depth = depth;
  s.id = variant + "/" + std::to_string(length) + "/" + std::to_string(static_cast<int>(score));
  s.prompt = "prompt of " + s.id;
  s.answers = {"1234567"};
  s.prediction = score > 50 ? "1234567" : "nothing";
  s.token_count = length - 128;
  return s;
}

// Two variants at two lengths; variant a has 3 samples at 4k, b has 1 (so the macro and micro
// averages differ).
EvalRun fake_run(const std::string& name, double shift) {
  EvalRun run;
  run.metadata = {{"run_name", name}, {"model", "tiny-swax"}, {"seed", 42}};
  run.samples = {sample("niah_single_1", 4096, 100, 0.0),        sample("niah_single_1", 4096, 100, 50.0),
                 sample("niah_single_1", 4096, 40 + shift, 100.0), sample("niah_single_1", 8192, 50, 50.0),
                 sample("niah_multikey_2", 4096, 0, 0.0),          sample("niah_multikey_2", 8192, 20 + shift, 50.0)};
  return run;
}

TEST(EvalReport, aggregates_average_variants_equally_at_each_length) {
  EvalAggregates agg = aggregate_results(fake_run("r", 0).samples);
  EXPECT_EQ(agg.variants, (std::vector<std::string>{"niah_single_1", "niah_multikey_2"}));
  EXPECT_EQ(agg.lengths, (std::vector<int64_t>{4096, 8192}));
  EXPECT_EQ(agg.depths, (std::vector<double>{0, 50, 100}));
  EXPECT_DOUBLE_EQ((agg.by_variant_length[{"niah_single_1", 4096}].mean), 80.0);
  EXPECT_EQ((agg.by_variant_length[{"niah_single_1", 4096}].count), 3);
  // RULER's average: mean of the task means (80 and 0), not of the 4 samples (60).
  EXPECT_DOUBLE_EQ(agg.by_length[4096].mean, 40.0);
  EXPECT_DOUBLE_EQ(agg.by_length[8192].mean, 35.0);
  EXPECT_DOUBLE_EQ(agg.overall, 37.5);
  EXPECT_DOUBLE_EQ((agg.by_length_depth[{4096, 0.0}].mean), 50.0);
}

TEST(EvalReport, many_distinct_depths_are_binned_by_ten_percent) {
  // RULER's random placement: every sample has its own depth.
  std::vector<EvalSampleResult> samples;
  for (int i = 0; i < 30; ++i) samples.push_back(sample("niah_single_1", 4096, i % 2 ? 100 : 0, i * 3.3));
  EvalAggregates agg = aggregate_results(samples);
  EXPECT_EQ(agg.depth_bin_width, 10);
  EXPECT_EQ(agg.depths, (std::vector<double>{0, 10, 20, 30, 40, 50, 60, 70, 80, 90}));
  EXPECT_EQ(depth_label(agg, 20), "20-30");
  EXPECT_EQ((agg.by_length_depth[{4096, 90.0}].count), 2);  // 92.4 and 95.7
  EvalAggregates exact = aggregate_results({sample("v", 4096, 1, 12.5)});
  EXPECT_EQ(exact.depth_bin_width, 0);
  EXPECT_EQ(depth_label(exact, 12.5), "12.5");
}

TEST(EvalReport, writes_results_summary_markdown_and_plots) {
  TempDir dir;
  ReportOptions options;
  options.title = "NIAH tiny";
  write_eval_report(dir.path(), fake_run("base", 0), options);

  Json results = read_json_file(dir.file("results.json"));
  EXPECT_EQ(results["format"], "swarmt-eval-results");
  EXPECT_EQ(results["metadata"]["model"], "tiny-swax");
  ASSERT_EQ(results["samples"].size(), 6u);
  const Json& first = results["samples"][0];
  for (const char* field : {"id", "variant", "length", "depth", "token_count", "prompt", "answers", "prediction", "score"})
    EXPECT_TRUE(first.contains(field)) << field;
  EXPECT_EQ(first["prompt"], "prompt of niah_single_1/4096/100");
  EXPECT_DOUBLE_EQ(results["aggregates"]["overall"].get<double>(), 37.5);

  Json summary = read_json_file(dir.file("summary.json"));
  EXPECT_EQ(summary["format"], "swarmt-eval-summary");
  EXPECT_FALSE(summary.contains("samples"));

  std::string md = read_text_file(dir.file("summary.md"));
  EXPECT_NE(md.find("# NIAH tiny"), std::string::npos);
  EXPECT_NE(md.find("- model: tiny-swax"), std::string::npos);
  EXPECT_NE(md.find("| niah_single_1   |           80.00 | 50.00 | 65.00 |"), std::string::npos) << md;
  // A cell whose samples are all right or wrong carries its Wilson interval (one wrong sample here).
  EXPECT_NE(md.find("| niah_multikey_2 | 0.0 [0.0, 79.3] | 20.00 | 10.00 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| average         |           40.00 | 35.00 | 37.50 |"), std::string::npos) << md;
  EXPECT_NE(md.find("![score vs context length](score_vs_length.svg)"), std::string::npos);

  for (const char* svg : {"score_vs_length.svg", "depth_heatmap.svg", "depth_heatmap_niah_single_1.svg",
                          "depth_heatmap_niah_multikey_2.svg"}) {
    ASSERT_TRUE(std::filesystem::exists(dir.file(svg))) << svg;
    auto check = check_xml(read_text_file(dir.file(svg)));
    EXPECT_EQ(check.error, "") << svg;
  }
  auto plot = check_xml(read_text_file(dir.file("score_vs_length.svg")));
  EXPECT_EQ(plot.element_count["polyline"], 3);  // two variants + the average
}

TEST(EvalReport, right_or_wrong_scores_get_wilson_intervals_and_partial_scores_none) {
  std::vector<EvalSampleResult> samples;
  for (int i = 0; i < 50; ++i) samples.push_back(sample("recall_k4", 64, i < 40 ? 100 : 0));
  samples.push_back(sample("recall_k4", 1024, 50));  // partial credit: no interval
  EvalAggregates agg = aggregate_results(samples);
  const MeanScore& binary = agg.by_variant_length[{"recall_k4", 64}];
  ASSERT_TRUE(binary.has_interval());
  EXPECT_EQ(binary.successes, 40);
  EXPECT_NEAR(binary.low, 66.96, 0.01);
  EXPECT_NEAR(binary.high, 88.75, 0.01);
  EXPECT_TRUE(agg.by_length[64].has_interval());  // one variant: the length's score is the variant's
  EXPECT_FALSE((agg.by_variant_length[{"recall_k4", 1024}].has_interval()));
  EXPECT_EQ(format_score(binary), "80.0 [67.0, 88.8]");
  EvalAggregates back = aggregates_from_json(aggregates_to_json(agg), "test");
  EXPECT_EQ((back.by_variant_length[{"recall_k4", 64}].successes), 40);
  EXPECT_NEAR((back.by_variant_length[{"recall_k4", 64}].high), 88.75, 0.01);
}

TEST(EvalReport, a_length_with_one_variant_keeps_its_interval_when_each_length_is_its_own_variant) {
  // `data synth --lengths` names a bucket per length (long_qa/512, long_qa/1024): one variant at each
  // length, so each length's score is a proportion of right answers and has its Wilson interval; a
  // length where two tasks are averaged has none.
  std::vector<EvalSampleResult> samples;
  for (int i = 0; i < 10; ++i) samples.push_back(sample("long_qa/512", 512, i < 7 ? 100 : 0));
  for (int i = 0; i < 10; ++i) samples.push_back(sample("long_qa/1024", 1024, i < 2 ? 100 : 0));
  samples.push_back(sample("other_task", 1024, 100));
  EvalAggregates agg = aggregate_results(samples);
  ASSERT_TRUE(agg.by_length[512].has_interval());
  EXPECT_EQ(agg.by_length[512].successes, 7);
  EXPECT_NEAR(agg.by_length[512].low, 39.68, 0.01);  // Wilson, 7 of 10
  EXPECT_NEAR(agg.by_length[512].high, 89.22, 0.01);
  EXPECT_FALSE(agg.by_length[1024].has_interval());
  EXPECT_DOUBLE_EQ(agg.by_length[1024].mean, 60.0);  // (20 + 100) / 2
}

TEST(EvalReport, distance_reports_name_their_axis_and_draw_marks_and_bars) {
  TempDir dir;
  EvalRun run;
  for (int64_t d : {16, 256})
    for (int i = 0; i < 10; ++i) {
      auto s = sample("recall_k4", d, (i < 9) == (d == 16) ? 100 : 0);
      s.details = {{"key", 3}, {"value", 70}};
      run.samples.push_back(s);
    }
  ReportOptions options;
  options.title = "Recall";
  options.length_name = "distance";
  options.marks = {{64, "window 64"}};
  write_eval_report(dir.path(), run, options);
  std::string md = read_text_file(dir.file("summary.md"));
  EXPECT_NE(md.find("## Mean score by variant and distance"), std::string::npos) << md;
  EXPECT_NE(md.find("90.0 [59.6, 98.2]"), std::string::npos) << md;
  EXPECT_NE(md.find("95 % Wilson intervals"), std::string::npos) << md;
  std::string svg = read_text_file(dir.file("score_vs_length.svg"));
  EXPECT_NE(svg.find(">window 64</text>"), std::string::npos);
  EXPECT_NE(svg.find(">distance (tokens)</text>"), std::string::npos);
  Json results = read_json_file(dir.file("results.json"));
  EXPECT_EQ(results["metadata"]["length_name"], "distance");
  EXPECT_EQ(results["metadata"]["plot_marks"][0]["label"], "window 64");
  EXPECT_EQ(results["samples"][0]["details"]["value"], 70);
}

TEST(EvalReport, prompts_can_be_left_out_of_results) {
  TempDir dir;
  ReportOptions options;
  options.include_prompts = false;
  write_eval_report(dir.path(), fake_run("base", 0), options);
  Json results = read_json_file(dir.file("results.json"));
  EXPECT_FALSE(results["samples"][0].contains("prompt"));
}

TEST(EvalReport, samples_without_depth_write_no_heatmap) {
  TempDir dir;
  EvalRun run;
  run.samples = {sample("passkey", 1024, 100), sample("passkey", 2048, 0)};
  write_eval_report(dir.path(), run);
  EXPECT_FALSE(std::filesystem::exists(dir.file("depth_heatmap.svg")));
  EXPECT_TRUE(read_json_file(dir.file("results.json"))["samples"][0]["depth"].is_null());
}

TEST(EvalReport, invalid_utf8_in_a_prediction_does_not_break_the_report) {
  TempDir dir;
  EvalRun run;
  run.samples = {sample("niah_single_1", 1024, 0)};
  run.samples[0].prediction = std::string("bad \xff\xfe bytes");
  write_eval_report(dir.path(), run);
  EXPECT_NO_THROW(read_json_file(dir.file("results.json")));
}

TEST(EvalReport, aggregates_round_trip_through_json) {
  EvalAggregates agg = aggregate_results(fake_run("r", 0).samples);
  EvalAggregates back = aggregates_from_json(aggregates_to_json(agg), "x.json");
  EXPECT_EQ(back.variants, agg.variants);
  EXPECT_EQ(back.lengths, agg.lengths);
  EXPECT_DOUBLE_EQ((back.by_variant_length[{"niah_multikey_2", 8192}].mean), 20.0);
  EXPECT_DOUBLE_EQ(back.by_length[8192].mean, 35.0);
  EXPECT_DOUBLE_EQ(back.overall, 37.5);
}

TEST(MarkdownTable, renders_aligned_escaped_cells) {
  MarkdownTable t({"variant", "4k"});
  t.add_row({"a|b", "100.00"});
  t.add_row({"niah_single_1", format_fixed(std::nan(""), 2)});
  EXPECT_EQ(t.render(),
            "| variant       |     4k |\n"
            "| ------------- | -----: |\n"
            "| a\\|b          | 100.00 |\n"
            "| niah_single_1 |      - |\n");
}

}  // namespace
}  // namespace swarmt::eval
