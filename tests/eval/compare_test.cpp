#include "swarmt/eval/compare.h"

#include <gtest/gtest.h>

#include "eval/xml_check.h"
#include "swarmt/core/error.h"
#include "test_util.h"

namespace swarmt::eval {
namespace {

using swarmt::testing::check_xml;
using swarmt::testing::run_swarmt;
using swarmt::testing::TempDir;

// A run directory with a report: `score` at 4k, `score / 2` at 16k, for two variants.
void write_fake_run(const std::string& dir, const std::string& name, double score) {
  EvalRun run;
  if (!name.empty()) run.metadata = {{"run_name", name}};
  for (const char* variant : {"niah_single_1", "niah_multikey_1"}) {
    for (int64_t length : {4096, 16384}) {
      EvalSampleResult s;
      s.id = std::string(variant) + "/" + std::to_string(length);
      s.variant = variant;
      s.length = length;
      s.answers = {"1"};
      s.score = length == 4096 ? score : score / 2;
      run.samples.push_back(s);
    }
  }
  write_eval_report(dir, run);
}

TEST(EvalCompare, two_runs_side_by_side_in_one_table_and_one_plot) {
  TempDir tmp;
  write_fake_run(tmp.file("swax"), "swax-stochastic", 90);
  write_fake_run(tmp.file("swa"), "", 40);  // no run_name: the directory name is used
  auto runs = write_comparison({tmp.file("swax"), tmp.file("swa")}, tmp.file("cmp"));
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].name, "swax-stochastic");
  EXPECT_EQ(runs[1].name, "swa");

  std::string md = read_text_file(tmp.file("cmp/compare.md"));
  EXPECT_NE(md.find("| variant         | length | swax-stochastic |   swa |"), std::string::npos) << md;
  EXPECT_NE(md.find("| niah_single_1   |     4k |           90.00 | 40.00 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| average         |    16k |           45.00 | 20.00 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| average         |    all |           67.50 | 30.00 |"), std::string::npos) << md;

  auto svg = check_xml(read_text_file(tmp.file("cmp/compare.svg")));
  EXPECT_EQ(svg.error, "");
  EXPECT_EQ(svg.element_count["polyline"], 2);  // one line per run

  Json j = read_json_file(tmp.file("cmp/compare.json"));
  EXPECT_EQ(j["runs"].size(), 2u);
  EXPECT_EQ(j["runs"][1]["name"], "swa");
}

TEST(EvalCompare, intervals_and_plot_marks_of_the_runs_are_shown) {
  TempDir tmp;
  for (const char* name : {"stochastic", "long"}) {
    EvalRun run;
    run.metadata = {{"run_name", name}};
    for (int i = 0; i < 20; ++i) {
      EvalSampleResult s;
      s.id = std::to_string(i);
      s.variant = "recall_k4";
      s.length = 1024;
      s.score = (std::string(name) == "long" ? i < 2 : i < 18) ? 100 : 0;
      run.samples.push_back(s);
    }
    ReportOptions options;
    options.length_name = "distance";
    options.marks = {{64, "window 64"}};
    write_eval_report(tmp.file(name), run, options);
  }
  write_comparison({tmp.file("stochastic"), tmp.file("long")}, tmp.file("cmp"));
  std::string md = read_text_file(tmp.file("cmp/compare.md"));
  EXPECT_NE(md.find("| variant   | distance |"), std::string::npos) << md;  // the runs' own axis name
  EXPECT_NE(md.find("90.0 [69.9, 97.2]"), std::string::npos) << md;
  EXPECT_NE(md.find("10.0 [2.8, 30.1]"), std::string::npos) << md;
  std::string svg = read_text_file(tmp.file("cmp/compare.svg"));
  EXPECT_NE(svg.find(">window 64</text>"), std::string::npos);  // drawn once for both runs
  EXPECT_EQ(svg.find(">window 64</text>"), svg.rfind(">window 64</text>"));
  EXPECT_NE(svg.find("score vs distance"), std::string::npos);
}

TEST(EvalCompare, runs_with_the_same_name_are_told_apart) {
  TempDir tmp;
  write_fake_run(tmp.file("a"), "base", 10);
  write_fake_run(tmp.file("b"), "base", 20);
  auto runs = write_comparison({tmp.file("a"), tmp.file("b")}, tmp.file("out"));
  EXPECT_EQ(runs[0].name, "base");
  EXPECT_EQ(runs[1].name, "base (2)");
}

TEST(EvalCompare, a_directory_without_a_report_is_a_clear_error) {
  TempDir tmp;
  try {
    read_run_summary(tmp.path());
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput);
    EXPECT_NE(std::string(e.what()).find("not an evaluation run directory"), std::string::npos) << e.what();
  }
  swarmt::testing::write_file(tmp.file("summary.json"), R"({"format": "something-else"})");
  EXPECT_THROW(read_run_summary(tmp.path()), Error);
}

TEST(EvalCompareCli, compare_command_writes_the_comparison_and_prints_the_table) {
  TempDir tmp;
  write_fake_run(tmp.file("r1"), "one", 80);
  write_fake_run(tmp.file("r2"), "two", 60);
  auto r = run_swarmt("eval compare " + tmp.file("r1") + " " + tmp.file("r2") + " --out " + tmp.file("cmp"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("| variant "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("|   one |   two |"), std::string::npos) << r.out;
  EXPECT_TRUE(std::filesystem::exists(tmp.file("cmp/compare.svg")));
}

TEST(EvalCompareCli, missing_run_directory_exits_with_a_usage_error) {
  TempDir tmp;
  auto r = run_swarmt("eval compare " + tmp.file("nope") + " --out " + tmp.file("cmp"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("not an evaluation run directory"), std::string::npos) << r.err;
  auto no_out = run_swarmt("eval compare " + tmp.file("nope"));
  EXPECT_EQ(no_out.exit_code, 2);
}

}  // namespace
}  // namespace swarmt::eval
