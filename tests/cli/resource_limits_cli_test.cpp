// Every user-given size is checked once, up front, against what it would cost: absurd lengths, segment
// counts, windows, model sizes and thread counts exit 2 naming the option or field, at once, before
// anything is written; never an OOM kill, a bad_alloc naming nothing, or minutes of spinning.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "cli/tiny_run.h"
#include "test_util.h"

namespace fs = std::filesystem;

namespace swarmt {
namespace {

using testing::run_swarmt;

// `swarmt ARGS` with SWARMT_MEMORY_LIMIT=LIMIT: the memory the checks compare against, whatever the machine.
testing::CommandResult run_with_memory_limit(const std::string& limit, const std::string& args) {
  return testing::run_shell("SWARMT_MEMORY_LIMIT=" + limit + " OMP_NUM_THREADS=1 '" + std::string(SWARMT_BINARY) +
                            "' --threads 1 " + args);
}

struct ResourceLimitsCli : ::testing::Test {
  void SetUp() override {
    testing::write_file(tmp.file("model.json"), testing::tiny_swax_model());
    auto r = run_swarmt("model init " + tmp.file("model.json") + " --out " + model());
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  std::string model() const { return tmp.file("model"); }
  testing::TempDir tmp;
};

TEST_F(ResourceLimitsCli, an_evaluation_length_that_cannot_fit_is_refused_naming_the_option) {
  for (const std::string task : {"passkey", "niah", "mqar"}) {
    auto r = run_with_memory_limit("4G", "-q eval " + task + " --model " + model() +
                        " --lengths 1000000000000 --samples 1 --out " + tmp.file("eval_" + task));
    EXPECT_EQ(r.exit_code, 2) << task << ": " << r.err;
    EXPECT_NE(r.err.find("error: --lengths: 1000000000000 tokens need about 14.6 TiB of memory (16 B per token) but "
                         "only 4.0 GiB is available"),
              std::string::npos)
        << task << ": " << r.err;
    EXPECT_FALSE(fs::exists(tmp.file("eval_" + task))) << task << ": a refused evaluation writes no report directory";
  }
  auto ppl = run_with_memory_limit("4G", "-q eval ppl --model " + model() + " --data " + tmp.file("none.json") +
                        " --length 1000000000000 --out " + tmp.file("ppl"));
  EXPECT_EQ(ppl.exit_code, 2) << ppl.err;
  EXPECT_NE(ppl.err.find("error: --length: 1000000000000 tokens need about"), std::string::npos) << ppl.err;
}

TEST_F(ResourceLimitsCli, a_synthetic_dataset_length_that_cannot_fit_is_refused) {
  auto r = run_with_memory_limit("1G", "-q data synth long_qa --tokenizer byte --lengths 4096m --samples 1 --out " +
                      tmp.file("qa.jsonl"));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("error: --lengths: 4294967296 tokens need about 64 GiB of memory"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(tmp.file("qa.jsonl")));
}

TEST_F(ResourceLimitsCli, an_armt_cost_segment_count_that_cannot_fit_is_refused_at_once) {
  testing::write_file(tmp.file("base.json"), R"({"model_type": "llama", "hidden_size": 32, "num_hidden_layers": 2,
      "num_attention_heads": 2, "num_key_value_heads": 2, "head_dim": 16, "intermediate_size": 64, "vocab_size": 259})");
  testing::write_file(tmp.file("armt.json"), R"({"segment_size": 64, "num_memory_tokens": 2, "d_mem": 8})");
  ASSERT_EQ(run_swarmt("model init " + tmp.file("base.json") + " --out " + tmp.file("base")).exit_code, 0);
  auto init = run_swarmt("armt init --base " + tmp.file("base") + " --config " + tmp.file("armt.json") + " --out " +
                         tmp.file("adapter"));
  ASSERT_EQ(init.exit_code, 0) << init.err;
  auto r = run_with_memory_limit("4G", "-q armt cost --model " + tmp.file("adapter") + " --segments 1,1000000000000");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("error: --segments: 1000000000000 segments need about"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << "refused before the first measurement";
}

TEST_F(ResourceLimitsCli, thread_counts_outside_one_to_a_few_per_core_are_refused) {
  for (const std::string threads : {"0", "-3", "100000"}) {
    auto r = testing::run_shell("'" + std::string(SWARMT_BINARY) + "' --threads=" + threads + " info " + model());
    EXPECT_EQ(r.exit_code, 2) << threads << ": " << r.err;
    EXPECT_NE(r.err.find("--threads"), std::string::npos) << threads << ": " << r.err;
    EXPECT_NE(r.err.find("is not a thread count in 1.."), std::string::npos) << threads << ": " << r.err;
  }
}

TEST_F(ResourceLimitsCli, model_init_makes_the_memory_check_of_train) {
  Json big = Json::parse(testing::tiny_swax_model());
  big["hidden_size"] = 4096;
  big["intermediate_size"] = 16384;
  big["num_attention_heads"] = 32;
  big["head_dim"] = 128;
  testing::write_file(tmp.file("big.json"), big.dump());
  auto r = run_with_memory_limit("64M", "model init " + tmp.file("big.json") + " --out " + tmp.file("big"));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("error: " + tmp.file("big.json") + ": the model (about "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("but only 64.0 MiB is available; choose a smaller model"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(tmp.file("big")));
}

// `model describe` describes any number of blocks, but builds one block of each kind to count it: a
// block that cannot fit is refused naming the config and the kind, a large model of sane blocks is not.
TEST_F(ResourceLimitsCli, model_describe_refuses_a_block_that_cannot_fit_but_describes_many_blocks) {
  Json big = Json::parse(testing::tiny_swax_model());
  big["hidden_size"] = 65536;
  big["intermediate_size"] = 1048576;
  testing::write_file(tmp.file("big.json"), big.dump());
  auto r = run_with_memory_limit("1G", "model describe " + tmp.file("big.json"));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("error: " + tmp.file("big.json") + ": one block of kind '"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("but only 1.0 GiB is available; choose a smaller model"), std::string::npos) << r.err;

  Json deep = Json::parse(testing::tiny_swax_model());
  deep["num_hidden_layers"] = 4096;
  std::string pattern;
  for (int i = 0; i < 2048; ++i) pattern += "MS";
  deep["layer_pattern"] = pattern;
  testing::write_file(tmp.file("deep.json"), deep.dump());
  auto ok = run_with_memory_limit("64M", "model describe --json " + tmp.file("deep.json"));
  EXPECT_EQ(ok.exit_code, 0) << ok.err;

  Json llama{{"model_type", "llama"}, {"hidden_size", 65536}, {"num_hidden_layers", 64}, {"num_attention_heads", 64},
             {"num_key_value_heads", 64}, {"head_dim", 1024}, {"intermediate_size", 262144}, {"vocab_size", 259}};
  testing::write_file(tmp.file("llama.json"), llama.dump());
  auto whole = run_with_memory_limit("1G", "model describe " + tmp.file("llama.json"));
  EXPECT_EQ(whole.exit_code, 2) << whole.err;
  EXPECT_NE(whole.err.find(tmp.file("llama.json") + ": the model (about "), std::string::npos) << whole.err;
}

TEST_F(ResourceLimitsCli, windows_beyond_any_context_are_refused_naming_the_option_or_field) {
  auto r = run_swarmt("generate --model " + model() + " --prompt x -n 1 --window 1099511627776");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("error: --window: 1099511627776 is not a window in 1..16777216 tokens"), std::string::npos)
      << r.err;

  Json config = Json::parse(testing::tiny_swax_model());
  config["sliding_window"] = int64_t{1} << 40;
  testing::write_file(tmp.file("wide.json"), config.dump());
  auto init = run_swarmt("model init " + tmp.file("wide.json") + " --out " + tmp.file("wide"));
  EXPECT_EQ(init.exit_code, 2) << init.err;
  EXPECT_NE(init.err.find(tmp.file("wide.json") + ": field 'sliding_window'"), std::string::npos) << init.err;
  EXPECT_FALSE(fs::exists(tmp.file("wide")));
}

}  // namespace
}  // namespace swarmt
