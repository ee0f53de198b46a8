// `swarmt eval recall` through the binary: a run writes its report, and every bad argument exits 2
// naming the option, before any report directory is created.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "cli/tiny_run.h"
#include "swarmt/core/json.h"
#include "test_util.h"

namespace fs = std::filesystem;

namespace swarmt {
namespace {

using testing::run_swarmt;

struct EvalRecallCli : ::testing::Test {
  void SetUp() override {
    testing::write_file(tmp.file("model.json"), testing::tiny_swax_model());  // MS: mLSTM + SWA, window 32
    auto r = run_swarmt("model init " + tmp.file("model.json") + " --out " + model());
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  std::string model() const { return tmp.file("model"); }
  testing::TempDir tmp;
};

TEST_F(EvalRecallCli, a_run_reports_every_question_with_its_interval) {
  auto r = run_swarmt("-q eval recall --model " + model() + " --pairs 2 --distances 8,1k --samples 3 --out " +
                      tmp.file("recall"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json results = read_json_file(tmp.file("recall/results.json"));
  EXPECT_EQ(results.at("samples").size(), 2u * 3u * 2u);
  const Json summary = read_json_file(tmp.file("recall/summary.json"));
  EXPECT_EQ(summary.at("metadata").at("pairs"), 2);
  EXPECT_TRUE(fs::exists(tmp.file("recall/score_vs_length.svg")));
  // The control runs on a model with recurrent and sliding-window layers.
  auto cut = run_swarmt("-q eval recall --model " + model() + " --pairs 1 --distances 64 --samples 2 "
                        "--forget-beyond-window --out " + tmp.file("cut"));
  EXPECT_EQ(cut.exit_code, 0) << cut.err;
}

TEST_F(EvalRecallCli, with_rewrites_each_question_is_scored_against_the_latest_value) {
  auto r = run_swarmt("-q eval recall --model " + model() + " --pairs 3 --rewrites 2 --gap 4 --distances 40 --samples 2 --out " +
                      tmp.file("rewrites"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json results = read_json_file(tmp.file("rewrites/results.json"));
  ASSERT_EQ(results.at("samples").size(), 3u * 2u);
  for (const auto& sample : results.at("samples")) {
    EXPECT_EQ(sample.at("variant"), "recall_k3_r2");
    const Json& d = sample.at("details");
    EXPECT_EQ(sample.at("score").get<double>() == 100.0, d.at("predicted") == d.at("value"));
  }
  EXPECT_EQ(read_json_file(tmp.file("rewrites/summary.json")).at("metadata").at("rewrites"), 2);
}

// Shuffled questions ask every stated key once, in another order: each question records the place its
// pair was stated at and its own distance, which average to the requested one.
TEST_F(EvalRecallCli, shuffled_questions_record_where_each_pair_was_stated_and_their_own_distance) {
  auto r = run_swarmt("-q eval recall --model " + model() + " --pairs 4 --gap 2 --distances 40 --samples 5 "
                      "--shuffle-questions --out " + tmp.file("shuffled"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json results = read_json_file(tmp.file("shuffled/results.json"));
  ASSERT_EQ(results.at("samples").size(), 4u * 5u);
  int64_t total_distance = 0, out_of_order = 0;
  for (const auto& sample : results.at("samples")) {
    const Json& d = sample.at("details");
    total_distance += d.at("distance").get<int64_t>();
    out_of_order += d.at("stated") != d.at("pair");
    EXPECT_EQ(d.at("distance").get<int64_t>(), 40 + 4 * (d.at("pair").get<int64_t>() - d.at("stated").get<int64_t>()));
  }
  EXPECT_EQ(total_distance, 40 * 4 * 5);
  EXPECT_GT(out_of_order, 0);
  EXPECT_EQ(read_json_file(tmp.file("shuffled/summary.json")).at("metadata").at("shuffle_questions"), true);
}

TEST_F(EvalRecallCli, bad_arguments_exit_2_naming_the_option_and_write_nothing) {
  const struct {
    std::string args, expected;
  } cases[] = {
      {"--pairs 0 --distances 16", "--pairs must be in [1, 4096]"},
      {"--pairs 1 --distances 0", "--distances"},
      {"--pairs 1 --distances 16,abc", "--distances"},
      {"--pairs 1 --distances 16 --samples 0", "--samples"},
      {"--pairs 1 --distances 16 --keys 9:3", "--keys: '9:3' is an empty range"},
      {"--pairs 1 --distances 16 --keys 1:100", "must be disjoint id ranges"},
      {"--pairs 1 --distances 16 --values 300:364", "vocabulary"},
      {"--pairs 8 --distances 4", "distance"},
      {"--pairs 1 --distances 16 --window 0x", "--window"},
      {"--pairs 2 --distances 64 --rewrites 64", "--rewrites must be in [0, 63]"},
  };
  int n = 0;
  for (const auto& c : cases) {
    const std::string out = tmp.file("bad" + std::to_string(n++));
    auto r = run_swarmt("-q eval recall --model " + model() + " " + c.args + " --out " + out);
    EXPECT_EQ(r.exit_code, 2) << c.args << ": " << r.err;
    EXPECT_NE(r.err.find(c.expected), std::string::npos) << c.args << ": " << r.err;
    EXPECT_FALSE(fs::exists(out)) << c.args << ": a refused evaluation leaves no report directory";
  }
}

TEST_F(EvalRecallCli, the_memory_cut_control_needs_recurrent_and_sliding_window_layers) {
  Json attention_only = Json::parse(testing::tiny_swax_model());
  attention_only["layer_pattern"] = "S";
  testing::write_file(tmp.file("swa.json"), attention_only.dump());
  ASSERT_EQ(run_swarmt("model init " + tmp.file("swa.json") + " --out " + tmp.file("swa")).exit_code, 0);
  auto r = run_swarmt("-q eval recall --model " + tmp.file("swa") + " --pairs 1 --distances 64 --samples 2 "
                      "--forget-beyond-window --out " + tmp.file("cut"));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--forget-beyond-window"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace swarmt
