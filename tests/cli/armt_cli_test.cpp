// `swarmt armt init | train | cost` and ARMT directories in generate / eval qa / info, through the real
// binary, with the errors a user sees for bad configs and broken adapters.
#include <gtest/gtest.h>

#include <filesystem>

#include "swarmt/core/json.h"
#include "test_util.h"

namespace swarmt {
namespace {

using testing::run_swarmt;
using testing::TempDir;
using testing::write_file;

struct ArmtCli : ::testing::Test {
  void SetUp() override {
    write_file(tmp.file("base.json"), R"({"model_type": "llama", "hidden_size": 32, "num_hidden_layers": 2,
      "num_attention_heads": 2, "num_key_value_heads": 2, "head_dim": 16, "intermediate_size": 64,
      "vocab_size": 259, "tie_word_embeddings": true, "bos_token_id": 257, "eos_token_id": 258, "pad_token_id": 256})");
    write_file(tmp.file("armt.json"), R"({"segment_size": 64, "num_memory_tokens": 2, "d_mem": 8, "memory_layers": [1]})");
    auto r = run_swarmt("model init " + tmp.file("base.json") + " --out " + tmp.file("base"));
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  TempDir tmp;
};

TEST_F(ArmtCli, init_writes_an_adapter_that_generate_eval_info_and_cost_accept) {
  auto r = run_swarmt("armt init --base " + tmp.file("base") + " --config " + tmp.file("armt.json") + " --out " +
                      tmp.file("adapter"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json summary = Json::parse(r.out);
  EXPECT_EQ(summary["memory_layers"], Json::array({1}));
  EXPECT_TRUE(std::filesystem::exists(tmp.file("adapter/armt.safetensors")));
  EXPECT_TRUE(std::filesystem::exists(tmp.file("adapter/tokenizer.json")));

  r = run_swarmt("generate --model " + tmp.file("adapter") + " --prompt 'Hello' --max-new-tokens 70 --temperature 0");
  EXPECT_EQ(r.exit_code, 0) << r.err;  // 75 tokens: crosses a segment boundary (commit) while decoding

  r = run_swarmt("info " + tmp.file("adapter"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("armt.layers.1.value.weight"), std::string::npos);

  r = run_swarmt("-q data synth long_qa --tokenizer byte --lengths 256 --samples 3 --distractors 0 --out " +
                 tmp.file("qa.jsonl"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run_swarmt("-q eval qa --model " + tmp.file("adapter") + " --data " + tmp.file("qa.jsonl") +
                 " --context-limit 64 --out " + tmp.file("eval"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json results = read_json_file(tmp.file("eval/results.json"));
  EXPECT_EQ(results["samples"].size(), 3u);
  for (const auto& s : results["samples"]) EXPECT_LE(s["token_count"].get<int64_t>(), 64);

  r = run_swarmt("-q armt cost --model " + tmp.file("adapter") + " --segments 1,4 --json " + tmp.file("cost.json"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json cost = read_json_file(tmp.file("cost.json"));
  ASSERT_EQ(cost["rows"].size(), 2u);
  EXPECT_DOUBLE_EQ(cost["rows"][0]["flops_ratio"].get<double>(), 1.0);  // one segment: no memory work
  EXPECT_LT(cost["rows"][1]["flops_ratio"].get<double>(), 1.0);        // 4 segments: local attention is cheaper
  EXPECT_GT(cost["rows"][1]["armt"]["peak_rss_bytes"].get<double>(), 0);
}

TEST_F(ArmtCli, train_writes_a_model_and_refuses_to_overwrite_it) {
  write_file(tmp.file("train.json"), R"({"armt": {"segment_size": 32, "num_memory_tokens": 2, "d_mem": 8},
    "data": {"train": {"type": "synthetic", "loss": "all", "tasks": [{"task": "essay"}]}},
    "curriculum": {"segments": [1, 2], "steps": [1, 1]},
    "training": {"batch_size": 2, "log_every": 1}})");
  const std::string args = "armt train --base " + tmp.file("base") + " --config " + tmp.file("train.json") + " --out " +
                           tmp.file("run");
  auto r = run_swarmt("-q " + args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Json::parse(r.out)["steps"], 2);
  EXPECT_TRUE(std::filesystem::exists(tmp.file("run/config.json")));
  r = run_swarmt("-q " + args);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("already holds a model"), std::string::npos) << r.err;
}

TEST_F(ArmtCli, a_merged_run_continues_in_a_new_phase_from_its_own_weights_and_only_as_a_merged_model) {
  write_file(tmp.file("first.json"), R"({"armt": {"segment_size": 32, "num_memory_tokens": 2, "d_mem": 8},
    "data": {"train": {"type": "synthetic", "loss": "all", "tasks": [{"task": "essay"}]}},
    "curriculum": {"segments": [2], "steps": [2]}, "training": {"batch_size": 2, "lr_schedule": {"type": "constant"}}})");
  auto r = run_swarmt("-q armt train --base " + tmp.file("base") + " --config " + tmp.file("first.json") + " --out " +
                      tmp.file("first"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(read_json_file(tmp.file("first/config.json"))["model_type"], "armt");  // merged: the base was trained

  // The continued run keeps the first run's ARMT config (the config gives none) and writes a merged model.
  write_file(tmp.file("next.json"), R"({"data": {"train": {"type": "synthetic", "loss": "all", "tasks": [{"task": "essay"}]}},
    "curriculum": {"segments": [3], "steps": [1]}, "training": {"batch_size": 2}})");
  r = run_swarmt("-q armt train --init " + tmp.file("first") + " --config " + tmp.file("next.json") + " --out " +
                 tmp.file("next"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json next = read_json_file(tmp.file("next/config.json"));
  EXPECT_EQ(next["model_type"], "armt");
  EXPECT_EQ(next["segment_size"], 32);
  EXPECT_EQ(next["d_mem"], 8);

  // An adapter cannot reference the merged run's trained base.
  write_file(tmp.file("adapter_out.json"), R"({"freeze_base": true, "output": "adapter",
    "data": {"train": {"type": "synthetic", "loss": "all", "tasks": [{"task": "essay"}]}},
    "curriculum": {"segments": [2], "steps": [1]}, "training": {"batch_size": 2}})");
  r = run_swarmt("-q armt train --init " + tmp.file("first") + " --config " + tmp.file("adapter_out.json") + " --out " +
                 tmp.file("adapter_run"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("'output'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("merged"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(tmp.file("adapter_run/config.json")));

  // A plain model is not an ARMT model to continue.
  r = run_swarmt("-q armt train --init " + tmp.file("base") + " --config " + tmp.file("next.json") + " --out " +
                 tmp.file("plain_run"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("not an ARMT model"), std::string::npos) << r.err;
}

TEST_F(ArmtCli, layers_trains_and_evaluates_one_run_per_subset) {
  write_file(tmp.file("train.json"), R"({"armt": {"segment_size": 64, "num_memory_tokens": 2, "d_mem": 8},
    "data": {"train": {"type": "synthetic", "loss": "all", "tasks": [{"task": "essay"}]}},
    "curriculum": {"segments": [2], "steps": [1]},
    "training": {"batch_size": 1, "log_every": 1}})");
  auto r = run_swarmt("-q data synth long_qa --tokenizer byte --lengths 256 --samples 2 --distractors 0 --out " +
                      tmp.file("qa.jsonl"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run_swarmt("-q armt layers --base " + tmp.file("base") + " --config " + tmp.file("train.json") +
                 " --subsets 'all;[1]' --eval-data " + tmp.file("qa.jsonl") + " --out " + tmp.file("layers"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json summary = read_json_file(tmp.file("layers/layers.json"));
  ASSERT_EQ(summary["runs"].size(), 2u);
  EXPECT_EQ(summary["runs"][0]["memory_layers"], Json::array({0, 1}));
  EXPECT_EQ(summary["runs"][1]["memory_layers"], Json::array({1}));
  // One memory layer has half the projections of two (the memory tokens are shared).
  const int64_t both = summary["runs"][0]["memory_parameters"].get<int64_t>();
  const int64_t one = summary["runs"][1]["memory_parameters"].get<int64_t>();
  EXPECT_EQ(both - one, one - 2 * 32);
  for (const auto& run : summary["runs"]) EXPECT_TRUE(run.contains("qa_exact_match"));
  EXPECT_TRUE(std::filesystem::exists(tmp.file("layers/layers.md")));
}

TEST_F(ArmtCli, bad_configs_and_broken_adapters_exit_2_with_the_file_named) {
  write_file(tmp.file("bad.json"), R"({"segment_size": 64, "memory_layers": "upper"})");
  auto r = run_swarmt("armt init --base " + tmp.file("base") + " --config " + tmp.file("bad.json") + " --out " +
                      tmp.file("a"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("error: " + tmp.file("bad.json") + ": field 'memory_layers': unknown preset"), std::string::npos)
      << r.err;

  r = run_swarmt("armt init --base " + tmp.file("base") + " --config " + tmp.file("armt.json") + " --out " +
                 tmp.file("adapter"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Json config = read_json_file(tmp.file("adapter/armt_config.json"));
  config["base_model"] = "../nowhere";
  write_file(tmp.file("adapter/armt_config.json"), config.dump());
  r = run_swarmt("generate --model " + tmp.file("adapter") + " --prompt x --max-new-tokens 1");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("armt_config.json: field 'base_model': \"../nowhere\" is not a directory"), std::string::npos)
      << r.err;

  r = run_swarmt("armt cost --model " + tmp.file("base"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("not an ARMT model"), std::string::npos) << r.err;
}

TEST_F(ArmtCli, lookup_reports_each_memory_layer_on_the_probes_of_eval_recall_and_refuses_bad_input) {
  write_file(tmp.file("armt16.json"), R"({"segment_size": 16, "num_memory_tokens": 2, "d_mem": 8, "memory_layers": [0, 1]})");
  auto r = run_swarmt("armt init --base " + tmp.file("base") + " --config " + tmp.file("armt16.json") + " --out " +
                      tmp.file("adapter"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run_swarmt("-q armt lookup --model " + tmp.file("adapter") +
                 " --pairs 3 --gap 14 --distance 64 --samples 4 --json " + tmp.file("lookup.json"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("| layer |"), std::string::npos) << r.out;
  const Json lookup = read_json_file(tmp.file("lookup.json"));
  EXPECT_EQ(lookup["questions"], 12);
  EXPECT_DOUBLE_EQ(lookup["lookup_chance"].get<double>(), 1.0 / 3.0);
  ASSERT_EQ(lookup["layers"].size(), 2u);
  for (const auto& layer : lookup["layers"]) {
    EXPECT_EQ(layer["questions"], 12);
    EXPECT_LE(layer["hits"].get<int64_t>(), 12);
    // An untrained adapter's memory (W_v = 0) reads nothing back, but its queries and keys exist.
    EXPECT_GE(layer["query_cosine"].get<double>(), -1.0);
    EXPECT_LE(layer["query_cosine"].get<double>(), 1.0 + 1e-9);
    EXPECT_GT(layer["beta_fact"].get<double>(), 0.0);
  }
  // The same probes as `eval recall` at that distance: the same answers.
  r = run_swarmt("-q eval recall --model " + tmp.file("adapter") + " --pairs 3 --gap 14 --distances 64 --samples 4 --out " +
                 tmp.file("recall"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json recall = read_json_file(tmp.file("recall/results.json"));
  EXPECT_EQ(recall["aggregates"]["by_length"][0]["successes"], lookup["answers_correct"]);

  // Without --keys, the ids of the recall task the model was last trained on, also from an ARMT run's phases.
  write_file(tmp.file("adapter/train_config.json"), R"({"phases": [{"data": {"train": {"tasks": [{"task": "recall",
      "keys": [97, 105], "values": [65, 73], "filler": [128, 256]}]}}}]})");
  r = run_swarmt("-q armt lookup --model " + tmp.file("adapter") + " --pairs 3 --gap 14 --distance 64 --samples 1 --json " +
                 tmp.file("lookup2.json"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_json_file(tmp.file("lookup2.json"))["keys"], Json::array({97, 105}));

  r = run_swarmt("armt lookup --model " + tmp.file("base"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("not an ARMT model"), std::string::npos) << r.err;
  r = run_swarmt("armt lookup --model " + tmp.file("adapter") + " --pairs 1");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--pairs must be in [2, 4096]"), std::string::npos) << r.err;
  r = run_swarmt("armt lookup --model " + tmp.file("adapter") + " --distance 1000000");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--distance must be in [1, 16384]"), std::string::npos) << r.err;
  r = run_swarmt("armt lookup --model " + tmp.file("adapter") + " --pairs 3 --gap 14 --distance 32");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--distance: 32 is shorter than the 3 facts"), std::string::npos) << r.err;
  r = run_swarmt("armt lookup --model " + tmp.file("adapter") + " --keys 5:3");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--keys"), std::string::npos) << r.err;
}

TEST_F(ArmtCli, any_checkpoint_of_a_run_is_traced_and_evaluated_with_the_run_s_recall_ids) {
  write_file(tmp.file("recall.json"), R"({"armt": {"segment_size": 16, "num_memory_tokens": 2, "d_mem": 8},
    "phases": [{"data": {"train": {"type": "synthetic", "loss": "answer", "tasks": [{"task": "recall",
        "keys": [97, 105], "values": [65, 73], "filler": [128, 256], "pairs": [[0, 2]], "distances": [[1, 16, 28]]}]}},
      "curriculum": {"segments": [2], "steps": [2]}}],
    "training": {"batch_size": 2, "checkpoint_every": 1, "keep_checkpoints": 2}})");
  auto r = run_swarmt("-q armt train --base " + tmp.file("base") + " --config " + tmp.file("recall.json") + " --out " +
                      tmp.file("run"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string checkpoint = tmp.file("run/checkpoints/checkpoint-00000001");
  r = run_swarmt("-q armt lookup --model " + checkpoint + " --pairs 3 --gap 14 --distance 48 --samples 2 --json " +
                 tmp.file("lookup.json"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json lookup = read_json_file(tmp.file("lookup.json"));
  EXPECT_EQ(lookup["keys"], Json::array({97, 105}));  // from RUN/train_config.json, two levels up
  EXPECT_EQ(lookup["values"], Json::array({65, 73}));
  r = run_swarmt("-q eval recall --model " + checkpoint + " --pairs 3 --gap 14 --distances 48 --samples 2 --out " +
                 tmp.file("recall"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json recall = read_json_file(tmp.file("recall/results.json"));
  EXPECT_EQ(recall["metadata"]["keys"], Json::array({97, 105}));
  EXPECT_EQ(recall["aggregates"]["by_length"][0]["successes"], lookup["answers_correct"]);
}

}  // namespace
}  // namespace swarmt
