// The experiment reports (experiments/*_report.py) read what swarmt writes: a real training run and real
// evaluation reports go in, and every number they show must come out unchanged in results.json.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "swarmt/core/json.h"
#include "test_util.h"

namespace swarmt {
namespace {

namespace fs = std::filesystem;
using testing::run_swarmt;
using testing::TempDir;
using testing::write_file;

Json read_json(const std::string& path) {
  std::ifstream in(path);
  return Json::parse(in);
}

TEST(ExperimentReport, swax_windows_report_carries_the_training_and_eval_numbers_into_results_json) {
  if (std::system("python3 -c 'import json' > /dev/null 2>&1") != 0) GTEST_SKIP() << "python3 is not installed";
  TempDir tmp;
  const std::string work = tmp.file("work");
  fs::create_directories(work);
  write_file(work + "/tiny.json", R"({
    "model": {"model_type": "swax", "layer_pattern": "MS", "num_hidden_layers": 2, "hidden_size": 32,
              "intermediate_size": 64, "num_attention_heads": 2, "num_key_value_heads": 2, "head_dim": 16,
              "sliding_window": 64, "mlstm_num_heads": 1, "mlstm_qk_head_dim": 16, "mlstm_v_head_dim": 32},
    "tokenizer": "byte", "sequence_length": 512,
    "data": {"train": {"type": "synthetic", "tasks": [{"task": "mqar"}, {"task": "essay"}]},
             "validation": {"type": "synthetic", "seed": 7, "tasks": [{"task": "essay"}]}},
    "window_schedule": {"type": "fixed", "window": 16},
    "training": {"max_steps": 2, "batch_size": 2, "optimizer": {"lr": 0.001}, "log_every": 1,
                 "eval_every": 2, "eval_batches": 1, "seed": 1}})");
  auto r = run_swarmt("-q train --config " + work + "/tiny.json --out " + work + "/tiny");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run_swarmt("-q eval niah --model " + work + "/tiny --variants niah_single_1,niah_multikey_2 --lengths 512,1024"
                 " --samples 1 --max-new-tokens 40 --out " + work + "/eval/niah/tiny");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run_swarmt("-q eval mqar --model " + work + "/tiny --lengths 512,1024 --samples 3 --out " + work + "/eval/mqar/tiny");
  ASSERT_EQ(r.exit_code, 0) << r.err;

  const fs::path experiments = fs::path(SWARMT_TEST_DATA_DIR).parent_path().parent_path() / "experiments";
  const std::string report = "python3 " + (experiments / "swax_windows_report.py").string() + " " + work + " " +
                             tmp.file("results") + " --mode quick --seconds 5 --models tiny";
  ASSERT_EQ(std::system(report.c_str()), 0) << report;

  const Json results = read_json(tmp.file("results/results.json"));
  const Json& model = results.at("models").at("tiny");
  EXPECT_EQ(model.at("layer_pattern"), "MS");
  EXPECT_EQ(model.at("steps"), 2);
  // The validation loss is the last one in metrics.jsonl.
  double last_val = -1;
  std::ifstream metrics(work + "/tiny/metrics.jsonl");
  for (std::string line; std::getline(metrics, line);) {
    const Json record = Json::parse(line);
    if (record.contains("val_loss")) last_val = record["val_loss"].get<double>();
  }
  ASSERT_GE(last_val, 0) << "the run logged no validation loss";
  EXPECT_DOUBLE_EQ(model.at("validation_loss").get<double>(), last_val);
  // Scores by length are those of the evaluation summaries.
  for (const char* eval : {"niah", "mqar"}) {
    const Json summary = read_json(work + "/eval/" + eval + "/tiny/summary.json");
    for (const auto& item : summary.at("aggregates").at("by_length")) {
      const std::string length = std::to_string(item.at("length").get<int64_t>());
      EXPECT_DOUBLE_EQ(model.at(eval).at("by_length").at(length).get<double>(), item.at("mean").get<double>())
          << eval << " at " << length;
    }
  }
  std::ifstream readme(tmp.file("results/README.md"));
  const std::string text((std::istreambuf_iterator<char>(readme)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("| tiny | MS | fixed 16 |"), std::string::npos) << text;
}

TEST(ExperimentReport, a_missing_evaluation_is_reported_with_its_path) {
  if (std::system("python3 -c 'import json' > /dev/null 2>&1") != 0) GTEST_SKIP() << "python3 is not installed";
  TempDir tmp;
  fs::create_directories(tmp.file("work/m"));
  write_file(tmp.file("work/m.json"), R"({"model": {"layer_pattern": "M"}, "window_schedule": {"type": "none"},
    "sequence_length": 512, "training": {"max_steps": 1, "batch_size": 1}})");
  write_file(tmp.file("work/m/metrics.jsonl"), "{\"step\": 1, \"loss\": 2.0}\n");
  const fs::path script =
      fs::path(SWARMT_TEST_DATA_DIR).parent_path().parent_path() / "experiments" / "swax_windows_report.py";
  auto r = testing::run_shell("python3 " + script.string() + " " + tmp.file("work") + " " + tmp.file("results") +
                              " --mode quick --seconds 1 --models m");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE((r.out + r.err).find("eval/niah/m/summary.json"), std::string::npos) << r.out << r.err;
  EXPECT_FALSE(fs::exists(tmp.file("results/results.json"))) << "nothing is written from partial inputs";
}

}  // namespace
}  // namespace swarmt
