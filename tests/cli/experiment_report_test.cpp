// The experiment reports (experiments/*_report.py) read what swarmt writes: a real training run and real
// evaluation reports go in, and every number they show must come out unchanged in results.json.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <vector>

#include "swarmt/core/json.h"
#include "swarmt/eval/wilson_interval.h"
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

TEST(ExperimentReport, swax_windows_report_carries_the_training_and_recall_numbers_into_results_json) {
  if (std::system("python3 -c 'import json' > /dev/null 2>&1") != 0) GTEST_SKIP() << "python3 is not installed";
  TempDir tmp;
  const std::string work = tmp.file("work");
  fs::create_directories(work);
  // Two tiny models of one family and seed (the long-window baseline and a stochastic one), trained on
  // the recall task for two steps, evaluated as the experiment does.
  for (const char* name : {"gdn_long_s1", "gdn_ramp_s1"}) {
    const std::string schedule = std::string(name) == "gdn_long_s1"
                                     ? R"({"type": "fixed", "window": 16})"
                                     : R"({"type": "stochastic", "short_window": 4, "long_window": 16, "p_short_warmup": 0.3})";
    write_file(work + "/" + name + ".json", R"({
      "model": {"model_type": "swax", "layer_pattern": "GS", "num_hidden_layers": 2, "hidden_size": 32,
                "intermediate_size": 64, "num_attention_heads": 2, "num_key_value_heads": 2, "head_dim": 16,
                "sliding_window": 16, "gdn_num_heads": 1, "gdn_head_dim": 16, "gdn_v_head_dim": 32},
      "tokenizer": "byte", "sequence_length": 64,
      "data": {"train": {"type": "synthetic", "tasks": [{"task": "recall", "pairs": 1, "distances": [[1, 4, 30]]}]},
               "validation": {"type": "synthetic", "seed": 7, "tasks": [{"task": "recall", "pairs": 1, "distances": [[1, 4, 30]]}]}},
      "window_schedule": )" + schedule + R"(,
      "training": {"max_steps": 2, "batch_size": 2, "optimizer": {"lr": 0.001}, "log_every": 1,
                   "eval_every": 2, "eval_batches": 1, "seed": 1}})");
    auto r = run_swarmt(std::string("-q train --config ") + work + "/" + name + ".json --out " + work + "/" + name);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    r = run_swarmt(std::string("-q eval recall --model ") + work + "/" + name + " --pairs 1 --distances 4,32,256 --samples 6 --out " +
                   work + "/eval/own/" + name);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  auto r = run_swarmt("-q eval recall --model " + work + "/gdn_ramp_s1 --pairs 1 --distances 4,32,256 --samples 6 "
                      "--forget-beyond-window --out " + work + "/eval/cut/gdn_ramp_s1");
  ASSERT_EQ(r.exit_code, 0) << r.err;

  const fs::path experiments = fs::path(SWARMT_TEST_DATA_DIR).parent_path().parent_path() / "experiments";
  const std::string report = "python3 " + (experiments / "swax_windows_report.py").string() + " " + work + " " +
                             tmp.file("results") + " --mode quick --seconds 5 --lr 0.001 --swarmt " + SWARMT_BINARY +
                             " --models gdn_long_s1 gdn_ramp_s1";
  ASSERT_EQ(std::system(report.c_str()), 0) << report;

  const Json results = read_json(tmp.file("results/results.json"));
  const Json& model = results.at("models").at("gdn_ramp_s1");
  EXPECT_EQ(model.at("layer_pattern"), "GS");  // as the training config gives it
  EXPECT_EQ(model.at("steps"), 2);
  // The validation loss is the last one in metrics.jsonl.
  double last_val = -1;
  std::ifstream metrics(work + "/gdn_ramp_s1/metrics.jsonl");
  for (std::string line; std::getline(metrics, line);) {
    const Json record = Json::parse(line);
    if (record.contains("val_loss")) last_val = record["val_loss"].get<double>();
  }
  ASSERT_GE(last_val, 0) << "the run logged no validation loss";
  EXPECT_DOUBLE_EQ(model.at("validation_loss").get<double>(), last_val);
  // Accuracies, counts and intervals by distance are those of the evaluation summaries.
  for (const char* kind : {"own", "cut"}) {
    const Json summary = read_json(work + "/eval/" + kind + "/gdn_ramp_s1/summary.json");
    for (const auto& item : summary.at("aggregates").at("by_length")) {
      const Json& got = model.at("evals").at(kind).at("by_distance").at(std::to_string(item.at("length").get<int64_t>()));
      EXPECT_DOUBLE_EQ(got.at("mean").get<double>(), item.at("mean").get<double>()) << kind;
      EXPECT_EQ(got.at("count"), item.at("count"));
      EXPECT_EQ(got.at("ci95"), item.at("ci95"));
    }
  }
  EXPECT_EQ(model.at("evals").at("own").at("window"), 16);
  // The checks compare the stochastic model with the long-window model of its family and seed.
  const Json& ratio = results.at("claims").at("validation_loss_ratio");
  ASSERT_EQ(ratio.size(), 1u);
  EXPECT_NEAR(ratio[0].at("ratio").get<double>(),
              last_val / results.at("models").at("gdn_long_s1").at("validation_loss").get<double>(), 1e-12);
  std::ifstream readme(tmp.file("results/README.md"));
  const std::string text((std::istreambuf_iterator<char>(readme)), std::istreambuf_iterator<char>());
  // The accuracy table's row of the model at its own window (columns padded by `swarmt report table`).
  EXPECT_TRUE(std::regex_search(text, std::regex(R"(\| GDN-SWAX ramp \(seed 1\) +\| +16 +\|)"))) << text;
}

TEST(ExperimentReport, report_wilson_interval_equals_the_engines_and_pooling_sums_the_questions) {
  if (std::system("python3 -c 'import json' > /dev/null 2>&1") != 0) GTEST_SKIP() << "python3 is not installed";
  const fs::path experiments = fs::path(SWARMT_TEST_DATA_DIR).parent_path().parent_path() / "experiments";
  // Pooled cells (the reports' own arithmetic) must carry the interval `swarmt eval` would give the same
  // questions: none, all, some right, small and large counts.
  const std::vector<std::pair<int, int>> cases = {{0, 50}, {50, 50}, {40, 50}, {1, 3}, {347, 600}, {121, 200}};
  std::string py = "import sys; sys.path.insert(0, '" + experiments.string() + "'); from report_lib import wilson, pooled\n";
  for (const auto& [k, n] : cases) py += "print(*wilson(" + std::to_string(k) + ", " + std::to_string(n) + "))\n";
  // 121 of 200 split into three cells pools to the interval of 121 of 200.
  py += "c = pooled([{'successes': 40, 'count': 60}, {'successes': 41, 'count': 70}, {'successes': 40, 'count': 70}])\n"
        "print(*c['ci95'], c['successes'], c['count'], c['mean'])\n";
  TempDir tmp;
  write_file(tmp.file("w.py"), py);
  auto r = testing::run_shell("python3 " + tmp.file("w.py"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::istringstream out(r.out);
  for (const auto& [k, n] : cases) {
    double low = 0, high = 0;
    out >> low >> high;
    const eval::Interval engine = eval::wilson_interval(k, n);
    EXPECT_NEAR(low, 100 * engine.low, 1e-9) << k << " of " << n;
    EXPECT_NEAR(high, 100 * engine.high, 1e-9) << k << " of " << n;
  }
  double low = 0, high = 0, successes = 0, count = 0, mean = 0;
  out >> low >> high >> successes >> count >> mean;
  EXPECT_EQ(successes, 121);
  EXPECT_EQ(count, 200);
  EXPECT_DOUBLE_EQ(mean, 60.5);
  EXPECT_NEAR(low, 100 * eval::wilson_interval(121, 200).low, 1e-9);
  EXPECT_NEAR(high, 100 * eval::wilson_interval(121, 200).high, 1e-9);
}

TEST(ExperimentReport, a_missing_evaluation_is_reported_with_its_path) {
  if (std::system("python3 -c 'import json' > /dev/null 2>&1") != 0) GTEST_SKIP() << "python3 is not installed";
  TempDir tmp;
  fs::create_directories(tmp.file("work/gdn_long_s1"));
  write_file(tmp.file("work/gdn_long_s1.json"), R"({"model": {"layer_pattern": "GS"}, "window_schedule": {"type": "none"},
    "sequence_length": 256, "training": {"max_steps": 1, "batch_size": 1, "seed": 1}})");
  write_file(tmp.file("work/gdn_long_s1/metrics.jsonl"), "{\"step\": 1, \"loss\": 2.0}\n");
  const fs::path script =
      fs::path(SWARMT_TEST_DATA_DIR).parent_path().parent_path() / "experiments" / "swax_windows_report.py";
  auto r = testing::run_shell("python3 " + script.string() + " " + tmp.file("work") + " " + tmp.file("results") +
                              " --mode quick --seconds 1 --lr 0.001 --swarmt " + SWARMT_BINARY + " --models gdn_long_s1");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE((r.out + r.err).find("eval/own/gdn_long_s1/summary.json"), std::string::npos) << r.out << r.err;
  EXPECT_FALSE(fs::exists(tmp.file("results/results.json"))) << "nothing is written from partial inputs";
}


// The ARMT reports: a base model trained for two steps, an ARMT model over it with memory in every layer
// and one with memory in the last layer only, real `eval qa` runs and `armt cost` tables. The work
// directory is built once for the suite; each test writes its own results directory.
struct ArmtExperimentReport : ::testing::Test {
  static void SetUpTestSuite() {
    tmp = new TempDir();
    work = tmp->file("work");
    if (std::system("python3 -c 'import json' > /dev/null 2>&1") != 0) return;
    fs::create_directories(work);
    write_file(work + "/base.json", R"({
      "model": {"model_type": "llama", "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2,
                "num_key_value_heads": 2, "head_dim": 16, "intermediate_size": 64, "vocab_size": 259,
                "tie_word_embeddings": true, "bos_token_id": 257, "eos_token_id": 258, "pad_token_id": 256},
      "tokenizer": "byte", "sequence_length": 64,
      "data": {"train": {"type": "synthetic", "tasks": [{"task": "essay"}]},
               "validation": {"type": "synthetic", "seed": 7, "tasks": [{"task": "essay"}]}},
      "training": {"max_steps": 2, "batch_size": 2, "log_every": 1, "eval_every": 2, "eval_batches": 1, "seed": 1}})");
    run("-q train --config " + work + "/base.json --out " + work + "/base_answer");
    for (const char* layers : {"\"all\"", "[1]"}) {
      const std::string name = std::string(layers) == "[1]" ? "armt_mid" : "armt";
      write_file(work + "/" + name + ".json",
                 std::string(R"({"armt": {"segment_size": 64, "num_memory_tokens": 2, "d_mem": 8, "memory_layers": )") +
                     layers + R"(}, "data": {"train": {"type": "synthetic", "loss": "all", "tasks": [{"task": "essay"}]}},
                     "curriculum": {"segments": [2], "steps": [1]}, "training": {"batch_size": 1, "log_every": 1}})");
      run("-q armt train --base " + work + "/base_answer --config " + work + "/" + name + ".json --out " + work + "/" + name);
    }
    run("-q data synth long_qa --tokenizer byte --lengths 256,512 --samples 2 --distractors 0 --seed 3 --out " + work +
        "/qa.jsonl");
    for (const char* name : {"armt", "armt_mid", "base_last_T"}) {
      const std::string model = std::string(name) == "base_last_T" ? "base_answer --context-limit 64" : name;
      run("-q eval qa --model " + work + "/" + model + " --data " + work + "/qa.jsonl --out " + work + "/eval/eval_d0/" + name);
    }
    // A model evaluated on length subsets of a set, one directory each (as the full-attention baseline is).
    for (const char* length : {"256", "512"}) {
      run("-q data synth long_qa --tokenizer byte --lengths " + std::string(length) +
          " --samples 3 --distractors 0 --seed 4 --out " + work + "/qa_" + length + ".jsonl");
      run("-q eval qa --model " + work + "/base_answer --data " + work + "/qa_" + length + ".jsonl --out " + work +
          "/eval/eval_d0_" + length + "/full");
    }
    // The retrieval study's probes: one report per call, several per model and set (merged by the report).
    const auto probe = [](const std::string& set, const std::string& name, const std::string& model,
                          const std::string& distances, const std::string& options) {
      std::string tag = distances;
      for (char& c : tag) c = c == ',' ? '_' : c;
      run("-q eval recall --model " + work + "/" + model + " --distances " + distances + " --samples 4 " + options +
          " --out " + work + "/eval/" + set + "/" + name + "/d" + tag);
    };
    probe("one_fact", "armt", "armt", "8,20", "--pairs 1");
    probe("one_fact", "armt", "armt", "128", "--pairs 1");
    probe("in_context", "armt", "armt", "4", "--pairs 2");
    probe("in_context", "base_recall", "base_answer", "4", "--pairs 2");
    probe("five_facts", "armt", "armt", "320", "--pairs 5 --gap 62");
    probe("five_facts", "armt_seed2", "armt_mid", "320", "--pairs 5 --gap 62");
    probe("five_facts", "armt_swax", "armt_mid", "320", "--pairs 5 --gap 62 --seed 7");
    probe("five_facts", "armt_noread", "armt", "320", "--pairs 5 --gap 62 --seed 9");
    probe("five_facts", "armt_noread_seed2", "armt_mid", "320", "--pairs 5 --gap 62 --seed 11");
    probe("in_context", "armt_noread", "armt", "4", "--pairs 2 --seed 9");
    probe("five_facts", "armt_gate", "armt", "320", "--pairs 5 --gap 62 --seed 13");
    probe("five_facts", "armt_gate_seed2", "armt_mid", "320", "--pairs 5 --gap 62 --seed 15");
    probe("five_facts", "armt8_noread", "armt", "320", "--pairs 5 --gap 62 --seed 17");
    probe("five_facts", "full8", "base_answer", "320", "--pairs 5 --gap 62 --seed 19");
    probe("five_facts", "full8_rope", "base_answer", "320", "--pairs 5 --gap 62 --seed 21");
    probe("five_facts", "armt_wide_noread", "armt", "320", "--pairs 5 --gap 62 --seed 23");
    probe("five_facts", "full_wide", "base_answer", "320", "--pairs 5 --gap 62 --seed 25");
    probe("five_facts", "full_wide_rope", "base_answer", "320", "--pairs 5 --gap 62 --seed 27");
    // An arm trained on the probes' layout and the full attention trained on the same data, asked in a random order.
    const std::string shuffled = "--pairs 5 --gap 62 --shuffle-questions --seed ";
    probe("five_facts_shuffled", "armt", "armt", "320", shuffled + "29");
    probe("five_facts_shuffled", "armt_probe", "armt_mid", "320", shuffled + "31");
    probe("five_facts_shuffled", "full", "base_answer", "320", shuffled + "33");
    probe("five_facts_shuffled", "full_probe", "base_answer", "320", shuffled + "35");
    probe("five_facts_shuffled", "full_probe_rope", "base_answer", "320", shuffled + "37");
    const std::string rewrites = "--pairs 5 --gap 62 --rewrites 2 --shuffle-questions --seed ";
    probe("rewrites_shuffled", "armt", "armt", "320", rewrites + "39");
    probe("rewrites_shuffled", "armt_probe_rw", "armt_mid", "320", rewrites + "41");
    probe("rewrites_shuffled", "full_probe_rw", "base_answer", "320", rewrites + "43");
    probe("rewrites_shuffled", "full_probe_rw_rope", "base_answer", "320", rewrites + "45");
    // With no answer that needs no key: distinct values, the answers not shown.
    const std::string hidden = "--pairs 5 --gap 62 --shuffle-questions --distinct-values --hide-answers --seed ";
    probe("five_facts_hidden", "armt", "armt", "320", hidden + "47");
    probe("five_facts_hidden", "armt_hidden", "armt_mid", "320", hidden + "47");
    probe("five_facts_hidden", "full_hidden", "base_answer", "320", hidden + "47");
    probe("five_facts_hidden", "full_hidden_rope", "base_answer", "320", hidden + "47");
    probe("in_context", "armt_swax", "armt_mid", "4", "--pairs 2");
    probe("in_context", "swax_base", "base_answer", "4", "--pairs 2 --seed 7");
    probe("rewrites", "full", "base_answer", "320", "--pairs 5 --gap 62 --rewrites 2");
    fs::create_directories(work + "/eval/lookup");  // the study's memory lookup of an arm
    run("-q armt lookup --model " + work + "/armt --pairs 5 --gap 62 --distance 320 --samples 2 --json " + work +
        "/eval/lookup/armt.json");
    run("-q armt cost --model " + work + "/armt --segments 1,2 --json " + work + "/cost.json");
    // The layer study's layout: arms named by their memory layers over one base, each probed in its
    // segment and on five facts at 8T, 16T and 32T (T = 20) in one report.
    fs::create_directory_symlink(work + "/armt", work + "/layers_all");
    fs::create_directory_symlink(work + "/armt_mid", work + "/layers_middle_upper");
    for (const char* name : {"layers_all", "layers_middle_upper"}) {
      probe("in_context", name, name, "4", "--pairs 2");
      probe("five_facts", name, name, "160,320,640", "--pairs 5 --gap 18");
      run("-q armt cost --model " + work + "/" + name + " --segments 1,8,32 --json " + work + "/cost_" + name + ".json");
    }
    probe("in_context", "base8", "base_answer", "4", "--pairs 2");
  }
  static void TearDownTestSuite() { delete tmp; }
  static void run(const std::string& args) {
    auto r = run_swarmt(args);
    if (r.exit_code != 0) setup_error += "swarmt " + args + " failed:\n" + r.err;
  }
  void SetUp() override {
    if (std::system("python3 -c 'import json' > /dev/null 2>&1") != 0) GTEST_SKIP() << "python3 is not installed";
    ASSERT_TRUE(setup_error.empty()) << setup_error;
  }
  testing::CommandResult report(const std::string& kind) {
    const fs::path script = fs::path(SWARMT_TEST_DATA_DIR).parent_path().parent_path() / "experiments" / "armt_report.py";
    return testing::run_shell("python3 " + script.string() + " " + kind + " " + work + " " + out_dir.path() +
                              " --mode quick --segment 64 --seconds 5 --swarmt " + SWARMT_BINARY);
  }
  static TempDir* tmp;
  static std::string work;
  static std::string setup_error;
  TempDir out_dir;
};
TempDir* ArmtExperimentReport::tmp = nullptr;
std::string ArmtExperimentReport::work;
std::string ArmtExperimentReport::setup_error;

TEST_F(ArmtExperimentReport, context_report_carries_scores_intervals_and_cost_into_results_json) {
  auto r = report("context");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const Json results = read_json(out_dir.path() + "/results.json");
  // Every cell is the evaluation summary's: mean, Wilson interval and count, by length.
  auto expect_cells = [&](const std::string& dir, const std::string& name) {
    const Json summary = read_json(work + "/eval/" + dir + "/" + name + "/summary.json");
    for (const auto& item : summary.at("aggregates").at("by_length")) {
      const std::string length = std::to_string(item.at("length").get<int64_t>());
      const Json& cell = results.at("cells").at(name).at("eval_d0").at(length);
      EXPECT_DOUBLE_EQ(cell.at("mean").get<double>(), item.at("mean").get<double>()) << name << " at " << length;
      // Exact match gives an interval where every score is 0 or 100; an untrained model may earn partial scores.
      EXPECT_EQ(cell.at("ci95"), item.contains("ci95") ? item.at("ci95") : Json(nullptr));
      EXPECT_EQ(cell.at("count"), item.at("count"));
    }
  };
  for (const char* name : {"armt", "base_last_T"}) expect_cells("eval_d0", name);
  // The length subsets of one set are merged into the set.
  expect_cells("eval_d0_256", "full");
  expect_cells("eval_d0_512", "full");
  EXPECT_EQ(results.at("cells").at("full").at("eval_d0").size(), 2u);
  EXPECT_TRUE(fs::exists(out_dir.path() + "/eval_d0.svg"));
  const Json cost = read_json(work + "/cost.json");
  ASSERT_EQ(results.at("cost").size(), cost.at("rows").size());
  for (size_t i = 0; i < cost.at("rows").size(); ++i)
    EXPECT_DOUBLE_EQ(results.at("cost")[i].at("armt_flops").get<double>(), cost.at("rows")[i].at("armt_flops").get<double>());
  EXPECT_EQ(results.at("training").at("armt").at("steps"), 1);
}

TEST_F(ArmtExperimentReport, retrieval_report_merges_every_probe_of_a_model_with_its_intervals_and_orders) {
  const fs::path script = fs::path(SWARMT_TEST_DATA_DIR).parent_path().parent_path() / "experiments" / "armt_retrieval_report.py";
  // T = 20 makes the five-fact probes' distance 320 the 16T cell of the acceptance comparisons.
  auto r = testing::run_shell("python3 " + script.string() + " " + work + " " + out_dir.path() +
                              " --mode quick --segment 20 --seconds 5 --swarmt " + SWARMT_BINARY);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const Json results = read_json(out_dir.path() + "/results.json");
  const auto expect_cells = [&](const std::string& set, const std::string& name, const std::string& tag) {
    const Json summary = read_json(work + "/eval/" + set + "/" + name + "/" + tag + "/summary.json");
    for (const auto& item : summary.at("aggregates").at("by_length")) {
      const std::string distance = std::to_string(item.at("length").get<int64_t>());
      const Json& cell = results.at("cells").at(name).at(set).at(distance);
      EXPECT_DOUBLE_EQ(cell.at("mean").get<double>(), item.at("mean").get<double>()) << name << " at " << distance;
      EXPECT_EQ(cell.at("ci95"), item.at("ci95"));  // recall is right or wrong: every cell has its interval
      EXPECT_EQ(cell.at("count"), item.at("count"));
    }
  };
  expect_cells("one_fact", "armt", "d8_20");
  expect_cells("one_fact", "armt", "d128");
  EXPECT_EQ(results.at("cells").at("armt").at("one_fact").size(), 3u) << "the two reports of one model are merged";
  expect_cells("in_context", "armt", "d4");
  expect_cells("in_context", "base_recall", "d4");
  expect_cells("five_facts", "armt", "d320");
  expect_cells("rewrites", "full", "d320");
  // "No loss inside the base's context" is the difference of the two in-context cells.
  const Json& in_context = results.at("comparisons").at("in_context");
  EXPECT_DOUBLE_EQ(in_context.at("difference_to_base_recall").get<double>(),
                   results.at("cells").at("armt").at("in_context").at("4").at("mean").get<double>() -
                       results.at("cells").at("base_recall").at("in_context").at("4").at("mean").get<double>());
  // Every fact is asked once per probe, so the accuracies by the order of statement average to the cell.
  const Json& order = results.at("five_facts_by_order").at("armt").at("320");
  ASSERT_EQ(order.size(), 5u);
  double sum = 0;
  for (const auto& x : order) sum += x.get<double>();
  EXPECT_NEAR(sum / 5, results.at("cells").at("armt").at("five_facts").at("320").at("mean").get<double>(), 0.1);
  // Every question's answer falls in exactly one class, and the right ones are the cell's successes.
  const Json& answers = results.at("five_facts_answers").at("armt").at("320");
  const Json& cell = results.at("cells").at("armt").at("five_facts").at("320");
  EXPECT_EQ(answers.at("questions"), cell.at("count"));
  EXPECT_EQ(answers.at("right"), cell.at("successes"));
  EXPECT_EQ(answers.at("right").get<int64_t>() + answers.at("other_stated").get<int64_t>() +
                answers.at("unstated_value").get<int64_t>() + answers.at("not_a_value").get<int64_t>(),
            answers.at("questions").get<int64_t>());
  int64_t by_offset = 0;
  for (const auto& [offset, n] : answers.at("other_stated_by_offset").items()) {
    EXPECT_NE(offset, "+0") << "a fact's own value is a right answer, not a confusion";
    by_offset += n.get<int64_t>();
  }
  EXPECT_EQ(by_offset, answers.at("other_stated").get<int64_t>());
  // The second seed's headline cell sits beside the first in the acceptance comparison, with its interval.
  expect_cells("five_facts", "armt_seed2", "d320");
  const Json& headline = results.at("comparisons").at("five_facts_16T");
  EXPECT_DOUBLE_EQ(headline.at("armt").get<double>(),
                   results.at("cells").at("armt").at("five_facts").at("320").at("mean").get<double>());
  EXPECT_DOUBLE_EQ(headline.at("armt_seed2").get<double>(),
                   results.at("cells").at("armt_seed2").at("five_facts").at("320").at("mean").get<double>());
  EXPECT_EQ(headline.at("armt_seed2_ci95"), results.at("cells").at("armt_seed2").at("five_facts").at("320").at("ci95"));
  EXPECT_FALSE(headline.at("armt_seed2_above_both_baselines_with_disjoint_intervals").get<bool>())
      << "no baseline was probed at 16T, so nothing is above it";
  // ARMT over the SWAX base likewise, and its in-context cell is judged against its own base.
  expect_cells("five_facts", "armt_swax", "d320");
  EXPECT_DOUBLE_EQ(headline.at("armt_swax").get<double>(),
                   results.at("cells").at("armt_swax").at("five_facts").at("320").at("mean").get<double>());
  EXPECT_EQ(headline.at("armt_swax_ci95"), results.at("cells").at("armt_swax").at("five_facts").at("320").at("ci95"));
  const Json& swax_inside = results.at("comparisons").at("in_context_swax");
  EXPECT_DOUBLE_EQ(swax_inside.at("difference_to_base").get<double>(),
                   results.at("cells").at("armt_swax").at("in_context").at("4").at("mean").get<double>() -
                       results.at("cells").at("swax_base").at("in_context").at("4").at("mean").get<double>());
  // The two seeds of an arm pool into one cell: their questions summed, with the engine's Wilson interval.
  const std::vector<std::pair<std::string, std::vector<std::string>>> pools = {
      {"armt_seeds_pooled", {"armt", "armt_seed2"}},
      {"armt_noread_seeds_pooled", {"armt_noread", "armt_noread_seed2"}},
      {"armt_gate_seeds_pooled", {"armt_gate", "armt_gate_seed2"}}};
  for (const auto& [pool, seeds] : pools) {
    int64_t successes = 0, count = 0;
    for (const auto& seed : seeds) {
      const Json& cell = results.at("cells").at(seed).at("five_facts").at("320");
      successes += cell.at("successes").get<int64_t>();
      count += cell.at("count").get<int64_t>();
    }
    ASSERT_TRUE(headline.contains(pool)) << pool;
    EXPECT_DOUBLE_EQ(headline.at(pool).get<double>(), 100.0 * successes / count) << pool;
    const eval::Interval engine = eval::wilson_interval(successes, count);
    EXPECT_NEAR(headline.at(pool + "_ci95")[0].get<double>(), 100 * engine.low, 1e-9) << pool;
    EXPECT_NEAR(headline.at(pool + "_ci95")[1].get<double>(), 100 * engine.high, 1e-9) << pool;
  }
  // An arm over the 8-layer base is judged against full attention over that base, not over the 4-layer one.
  const auto cell_of = [&](const std::string& model) { return results.at("cells").at(model).at("five_facts").at("320"); };
  EXPECT_DOUBLE_EQ(headline.at("full8").get<double>(), cell_of("full8").at("mean").get<double>());
  EXPECT_TRUE(headline.at("full").is_null()) << "the 4-layer baseline was not probed at 16T";
  const double rivals_high = std::max(cell_of("full8").at("ci95")[1].get<double>(),
                                      cell_of("full8_rope").at("ci95")[1].get<double>());
  EXPECT_EQ(headline.at("armt8_noread_above_both_baselines_with_disjoint_intervals").get<bool>(),
            cell_of("armt8_noread").at("ci95")[0].get<double>() > rivals_high);
  EXPECT_EQ(headline.at("armt8_noread_judged_against"), Json::array({"full8", "full8_rope"}));
  // Likewise an arm over the wider base, against full attention over the wider base.
  EXPECT_EQ(headline.at("armt_wide_noread_judged_against"), Json::array({"full_wide", "full_wide_rope"}));
  EXPECT_DOUBLE_EQ(headline.at("full_wide").get<double>(), cell_of("full_wide").at("mean").get<double>());
  const double wide_rivals_high = std::max(cell_of("full_wide").at("ci95")[1].get<double>(),
                                           cell_of("full_wide_rope").at("ci95")[1].get<double>());
  EXPECT_EQ(headline.at("armt_wide_noread_above_both_baselines_with_disjoint_intervals").get<bool>(),
            cell_of("armt_wide_noread").at("ci95")[0].get<double>() > wide_rivals_high);
  EXPECT_EQ(headline.at("armt_noread_judged_against"), Json::array({"full", "full_rope"}));
  // An arm trained on the probes' layout is judged against full attention trained on that layout.
  const Json& shuffled = results.at("comparisons").at("five_facts_shuffled_16T");
  const auto shuffled_cell = [&](const std::string& model) {
    return results.at("cells").at(model).at("five_facts_shuffled").at("320");
  };
  EXPECT_EQ(shuffled.at("armt_probe_judged_against"), Json::array({"full_probe", "full_probe_rope"}));
  EXPECT_DOUBLE_EQ(shuffled.at("armt_probe").get<double>(), shuffled_cell("armt_probe").at("mean").get<double>());
  EXPECT_DOUBLE_EQ(shuffled.at("full_probe").get<double>(), shuffled_cell("full_probe").at("mean").get<double>());
  EXPECT_DOUBLE_EQ(shuffled.at("full_probe_rope").get<double>(),
                   shuffled_cell("full_probe_rope").at("mean").get<double>());
  const double probe_rivals_high = std::max(shuffled_cell("full_probe").at("ci95")[1].get<double>(),
                                            shuffled_cell("full_probe_rope").at("ci95")[1].get<double>());
  EXPECT_EQ(shuffled.at("armt_probe_above_both_baselines_with_disjoint_intervals").get<bool>(),
            shuffled_cell("armt_probe").at("ci95")[0].get<double>() > probe_rivals_high);
  // Its rewrite stage, against full attention given the same rewrite stage.
  const Json& rewritten = results.at("comparisons").at("rewrites_shuffled_16T");
  const auto rewrite_cell = [&](const std::string& model) {
    return results.at("cells").at(model).at("rewrites_shuffled").at("320");
  };
  EXPECT_EQ(rewritten.at("armt_probe_rw_judged_against"), Json::array({"full_probe_rw", "full_probe_rw_rope"}));
  EXPECT_DOUBLE_EQ(rewritten.at("full_probe_rw").get<double>(), rewrite_cell("full_probe_rw").at("mean").get<double>());
  const double rewrite_rivals_high = std::max(rewrite_cell("full_probe_rw").at("ci95")[1].get<double>(),
                                              rewrite_cell("full_probe_rw_rope").at("ci95")[1].get<double>());
  EXPECT_EQ(rewritten.at("armt_probe_rw_above_both_baselines_with_disjoint_intervals").get<bool>(),
            rewrite_cell("armt_probe_rw").at("ci95")[0].get<double>() > rewrite_rivals_high);
  // Every comparison row carries the key-blind floor of its probes, and says whether an arm's interval lies
  // above it: with the answers shown and values that may repeat it is far above 20%, with neither it is 20%.
  const double shuffled_floor = read_json(work + "/eval/five_facts_shuffled/armt/d320/summary.json")
                                    .at("metadata").at("key_blind_percent").at("320").get<double>();
  EXPECT_DOUBLE_EQ(shuffled.at("key_blind").get<double>(), shuffled_floor);
  EXPECT_GT(shuffled_floor, 30.0);
  EXPECT_EQ(shuffled.at("armt_probe_above_key_blind").get<bool>(),
            shuffled_cell("armt_probe").at("ci95")[0].get<double>() > shuffled_floor);
  const Json& no_cue = results.at("comparisons").at("five_facts_hidden_16T");
  EXPECT_DOUBLE_EQ(no_cue.at("key_blind").get<double>(), 20.0);
  EXPECT_EQ(no_cue.at("armt_hidden_judged_against"), Json::array({"full_hidden", "full_hidden_rope"}));
  const Json& hidden_cell = results.at("cells").at("armt_hidden").at("five_facts_hidden").at("320");
  EXPECT_EQ(no_cue.at("armt_hidden_above_key_blind").get<bool>(), hidden_cell.at("ci95")[0].get<double>() > 20.0);
  const Json& noread_inside = results.at("comparisons").at("in_context_armt_noread");
  EXPECT_DOUBLE_EQ(noread_inside.at("difference_to_base_recall").get<double>(),
                   results.at("cells").at("armt_noread").at("in_context").at("4").at("mean").get<double>() -
                       results.at("cells").at("base_recall").at("in_context").at("4").at("mean").get<double>());
  // The memory lookup of an arm: per memory layer, its share of questions with the interval of those counts.
  const Json lookup = read_json(work + "/eval/lookup/armt.json");
  const Json& reported = results.at("memory_lookup").at("armt");
  ASSERT_EQ(reported.at("layers").size(), lookup.at("layers").size());
  EXPECT_DOUBLE_EQ(reported.at("chance").get<double>(), 20.0);
  EXPECT_DOUBLE_EQ(reported.at("answers").get<double>(),
                   100.0 * lookup.at("answers_correct").get<double>() / lookup.at("questions").get<double>());
  for (size_t i = 0; i < lookup.at("layers").size(); ++i) {
    const Json& layer = lookup.at("layers")[i];
    const Json& row = reported.at("layers")[i];
    EXPECT_EQ(layer.at("questions"), 10);
    EXPECT_DOUBLE_EQ(row.at("lookup").get<double>(),
                     100.0 * layer.at("hits").get<double>() / layer.at("questions").get<double>());
    const eval::Interval engine = eval::wilson_interval(layer.at("hits").get<int64_t>(), 10);
    EXPECT_NEAR(row.at("lookup_ci95")[0].get<double>(), 100 * engine.low, 1e-9);
    EXPECT_NEAR(row.at("lookup_ci95")[1].get<double>(), 100 * engine.high, 1e-9);
  }
  std::ifstream readme_file(out_dir.path() + "/README.md");
  const std::string readme((std::istreambuf_iterator<char>(readme_file)), std::istreambuf_iterator<char>());
  EXPECT_NE(readme.find("What the memory reads"), std::string::npos) << readme;
  EXPECT_NE(readme.find("memory tokens that do not read, both seeds pooled"), std::string::npos) << readme;
  EXPECT_NE(readme.find("gated reads, both seeds pooled"), std::string::npos) << readme;
  EXPECT_TRUE(fs::exists(out_dir.path() + "/one_fact.svg"));
  EXPECT_EQ(results.at("training").at("armt").at("steps"), 1);
}

TEST_F(ArmtExperimentReport, layers_report_reads_the_memory_layers_and_pools_questions_with_wilson_intervals) {
  const fs::path script = fs::path(SWARMT_TEST_DATA_DIR).parent_path().parent_path() / "experiments" / "armt_layers_report.py";
  auto r = testing::run_shell("python3 " + script.string() + " " + work + " " + out_dir.path() +
                              " --mode quick --segment 20 --seconds 5 --swarmt " + SWARMT_BINARY);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const Json results = read_json(out_dir.path() + "/results.json");
  EXPECT_EQ(results.at("memory").at("layers_all").at("memory_layers"), Json::array({0, 1}));
  EXPECT_EQ(results.at("memory").at("layers_middle_upper").at("memory_layers"), Json::array({1}));
  const int64_t all = results.at("memory").at("layers_all").at("memory_parameters").get<int64_t>();
  const int64_t one = results.at("memory").at("layers_middle_upper").at("memory_parameters").get<int64_t>();
  EXPECT_GT(one, 0);
  EXPECT_LT(one, all);
  for (const char* name : {"layers_all", "layers_middle_upper"}) {
    // The pooled cell over 8T-32T holds every question of the three distances; the probe asked them in one
    // report, whose by-variant aggregate is the engine's own count and Wilson interval of the same questions.
    const Json summary = read_json(work + "/eval/five_facts/" + name + "/d160_320_640/summary.json");
    const Json& engine = summary.at("aggregates").at("by_variant").at(0);
    const Json& cell = results.at("comparisons").at(name).at("pooled");
    EXPECT_EQ(cell.at("count"), engine.at("count")) << name;
    EXPECT_EQ(cell.at("successes"), engine.at("successes")) << name;
    EXPECT_NEAR(cell.at("ci95")[0].get<double>(), engine.at("ci95")[0].get<double>(), 1e-9) << name;
    EXPECT_NEAR(cell.at("ci95")[1].get<double>(), engine.at("ci95")[1].get<double>(), 1e-9) << name;
    EXPECT_DOUBLE_EQ(results.at("comparisons").at(name).at("in_context").get<double>(),
                     results.at("cells").at(name).at("in_context").at("4").at("mean").get<double>());
  }
  const Json& mid = results.at("comparisons").at("layers_middle_upper");
  EXPECT_DOUBLE_EQ(mid.at("difference_to_all").get<double>(),
                   mid.at("pooled").at("mean").get<double>() -
                       results.at("comparisons").at("layers_all").at("pooled").at("mean").get<double>());
  EXPECT_TRUE(results.at("cells").contains("base8")) << "the base's own in-segment score is reported beside the arms";
  EXPECT_TRUE(fs::exists(out_dir.path() + "/five_facts.svg"));
}

TEST_F(ArmtExperimentReport, a_missing_cost_table_is_reported_with_its_path) {
  // The suite's work directory is shared: the table is moved away for this test only.
  fs::rename(work + "/cost.json", work + "/cost.json.away");
  auto r = report("context");
  fs::rename(work + "/cost.json.away", work + "/cost.json");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE((r.out + r.err).find("cost.json"), std::string::npos) << r.out << r.err;
  EXPECT_FALSE(fs::exists(out_dir.path() + "/results.json")) << "nothing is written from partial inputs";
}

}  // namespace
}  // namespace swarmt
