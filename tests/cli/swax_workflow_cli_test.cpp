// The SWAX workflow through the real binary: describe and initialise models, train, resume, generate,
// evaluate, benchmark kernels; and the errors a user sees on bad input.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "swarmt/core/json.h"
#include "test_util.h"

namespace fs = std::filesystem;

namespace swarmt {
namespace {

const char* kTinyModel = R"({"model_type": "swax", "hidden_size": 32, "layer_pattern": "MS", "num_hidden_layers": 2,
  "num_attention_heads": 2, "head_dim": 16, "sliding_window": 32, "mlstm_num_heads": 2,
  "mlstm_qk_head_dim": 8, "mlstm_v_head_dim": 16, "intermediate_size": 64})";

std::string train_config(int64_t steps) {
  Json c{{"model", Json::parse(kTinyModel)},
         {"sequence_length", 512},
         {"data", {{"train", {{"type", "synthetic"}, {"tasks", {{{"task", "passkey"}}}}}}}},
         {"window_schedule", {{"type", "stochastic"}, {"short_window", 8}, {"long_window", 32}, {"p_short", 0.5}}},
         {"training", {{"max_steps", steps}, {"batch_size", 2}, {"log_every", 1}, {"checkpoint_every", 2}}}};
  return c.dump();
}

std::string configs_dir() { return std::string(SWARMT_TEST_DATA_DIR) + "/../../configs"; }

TEST(ModelCli, describe_builds_the_7b_layout_one_block_at_a_time) {
  auto r = testing::run_swarmt("model describe " + configs_dir() + "/swax-7b.json --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json j = Json::parse(r.out);
  const double n = j.at("total_parameters").get<double>();
  EXPECT_GT(n, 6e9);
  EXPECT_LT(n, 8e9);
  EXPECT_EQ(j.at("blocks").at("M").at("count").get<int>(), 16);
  EXPECT_EQ(j.at("blocks").at("S").at("count").get<int>(), 16);
  auto table = testing::run_swarmt("model describe " + configs_dir() + "/swax-1.4b.json");
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("mLSTM"), std::string::npos) << table.out;
}

TEST(ModelCli, init_writes_a_loadable_model_and_refuses_to_overwrite_it) {
  testing::TempDir tmp;
  testing::write_file(tmp.file("config.json"), kTinyModel);
  auto r = testing::run_swarmt("model init " + tmp.file("config.json") + " --out " + tmp.file("m"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto info = testing::run_swarmt("info " + tmp.file("m"));
  EXPECT_EQ(info.exit_code, 0) << info.err;
  auto again = testing::run_swarmt("model init " + tmp.file("config.json") + " --out " + tmp.file("m"));
  EXPECT_EQ(again.exit_code, 2);
  EXPECT_NE(again.err.find("--force"), std::string::npos) << again.err;
}

TEST(TrainCli, train_resume_generate_and_eval_a_tiny_swax_model) {
  testing::TempDir tmp;
  testing::write_file(tmp.file("run.json"), train_config(4));
  auto r = testing::run_swarmt("-q train --config " + tmp.file("run.json") + " --out " + tmp.file("run") + " --max-steps 2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::exists(tmp.file("run/model.safetensors")));
  // Extending the finished run continues from its last checkpoint.
  auto more = testing::run_swarmt("-q train --config " + tmp.file("run.json") + " --out " + tmp.file("run") +
                                  " --max-steps 4 --resume");
  ASSERT_EQ(more.exit_code, 0) << more.err;
  EXPECT_EQ(Json::parse(more.out).at("steps").get<int>(), 4);

  auto gen = testing::run_swarmt("generate --model " + tmp.file("run") +
                                 " --prompt 'The pass key is' -n 8 --ignore-eos --stats 2>&1 1>/dev/null | tail -n 1");
  ASSERT_EQ(gen.exit_code, 0) << gen.err;
  const Json stats = Json::parse(gen.out);
  EXPECT_EQ(stats.at("generated_tokens").get<int>(), 8) << gen.out;
  EXPECT_EQ(stats.at("prompt_tokens").get<int>(), 16) << "bos + 15 bytes";
  EXPECT_EQ(stats.at("decode_steps").get<int>(), 7) << "8 tokens: the first from the prefill";

  auto ev = testing::run_swarmt("-q eval passkey --model " + tmp.file("run") + " --lengths 512 --samples 2 --out " +
                                tmp.file("eval"));
  ASSERT_EQ(ev.exit_code, 0) << ev.err;
  EXPECT_TRUE(fs::exists(tmp.file("eval/results.json")));
  EXPECT_TRUE(fs::exists(tmp.file("eval/summary.md")));
  EXPECT_TRUE(fs::exists(tmp.file("eval/resources.md"))) << "memory and speed per length";

  auto niah = testing::run_swarmt("-q eval niah --model " + tmp.file("run") +
                                  " --variants niah_single_1,niah_multikey_1 --lengths 1k --samples 1 --out " +
                                  tmp.file("niah"));
  ASSERT_EQ(niah.exit_code, 0) << niah.err;
  std::ifstream results(tmp.file("niah/results.json"));
  const Json j = Json::parse(results);
  EXPECT_NE(j.dump().find("niah_multikey_1"), std::string::npos);
  EXPECT_FALSE(fs::is_empty(tmp.file("niah")));

  // --max-new-tokens is also the room kept free for the answer: RULER's 128-token reserve would not
  // leave space for the ~450-token prompt at 512 tokens, 40 tokens of room does.
  auto reserve128 = testing::run_swarmt("-q eval niah --model " + tmp.file("run") +
                                        " --lengths 512 --samples 1 --out " + tmp.file("niah512_default"));
  EXPECT_NE(reserve128.exit_code, 0) << "a 512-token context cannot hold the prompt and 128 answer tokens";
  auto reserve40 = testing::run_swarmt("-q eval niah --model " + tmp.file("run") +
                                       " --lengths 512 --samples 1 --max-new-tokens 40 --out " + tmp.file("niah512"));
  ASSERT_EQ(reserve40.exit_code, 0) << reserve40.err;
  std::ifstream results512(tmp.file("niah512/results.json"));
  for (const auto& sample : Json::parse(results512).at("samples"))
    EXPECT_LE(sample.at("token_count").get<int64_t>() + 40, 512) << sample.dump();
}

// Text files -> token files -> a training run on them, validation on the held-out documents.
TEST(TrainCli, trains_on_token_files_made_by_data_prepare) {
  testing::TempDir tmp;
  std::string jsonl;
  for (int i = 0; i < 200; ++i)
    jsonl += Json{{"text", "Document " + std::to_string(i) + ": the cat sat on the mat, and the dog ran after it."}}.dump() + "\n";
  testing::write_file(tmp.file("docs.jsonl"), jsonl);
  auto prep = testing::run_swarmt("-q data prepare --tokenizer byte --input " + tmp.file("docs.jsonl") + " --out " +
                                  tmp.file("corpus") + " --validation-fraction 0.1 --add-eos");
  ASSERT_EQ(prep.exit_code, 0) << prep.err;
  Json c = Json::parse(train_config(3));
  c["sequence_length"] = 128;
  c["data"] = {{"train", {{"type", "tokens"}, {"path", tmp.file("corpus.json")}}},
               {"validation", {{"type", "tokens"}, {"path", tmp.file("corpus-validation.json")}}}};
  testing::write_file(tmp.file("run.json"), c.dump());
  auto r = testing::run_swarmt("-q train --config " + tmp.file("run.json") + " --out " + tmp.file("run"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_GT(Json::parse(r.out).at("final_val_loss").get<double>(), 0);
}

TEST(TrainCli, bad_inputs_exit_2_with_an_error_naming_the_problem) {
  testing::TempDir tmp;
  auto missing = testing::run_swarmt("train --config " + tmp.file("nope.json") + " --out " + tmp.file("run"));
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("nope.json"), std::string::npos) << missing.err;

  testing::write_file(tmp.file("bad.json"), "{\"model\": {\"layer_pattern\": \"MS\"}, \"sequence_length\": 512,");
  auto truncated = testing::run_swarmt("train --config " + tmp.file("bad.json") + " --out " + tmp.file("run"));
  EXPECT_EQ(truncated.exit_code, 2);
  EXPECT_NE(truncated.err.find("bad.json"), std::string::npos) << truncated.err;

  Json c = Json::parse(train_config(2));
  c["training"]["lr_schedule"] = {{"type", "triangle"}};
  testing::write_file(tmp.file("sched.json"), c.dump());
  auto sched = testing::run_swarmt("train --config " + tmp.file("sched.json") + " --out " + tmp.file("run"));
  EXPECT_EQ(sched.exit_code, 2);
  EXPECT_NE(sched.err.find("triangle"), std::string::npos) << sched.err;
  EXPECT_FALSE(fs::exists(tmp.file("run/checkpoints"))) << "nothing is written for a rejected config";

  auto no_model = testing::run_swarmt("generate --model " + tmp.file("nothing") + " --prompt x");
  EXPECT_EQ(no_model.exit_code, 2);
  EXPECT_NE(no_model.err.find("error:"), std::string::npos) << no_model.err;
}

// --dtype bfloat16 stores the same drawn weights rounded to bf16 (the config says so, and a model loaded
// from it runs in bf16); a dtype that is not one is refused naming the option.
TEST(ModelCli, init_with_dtype_stores_the_weights_in_that_dtype) {
  testing::TempDir tmp;
  testing::write_file(tmp.file("config.json"), kTinyModel);
  auto r = testing::run_swarmt("model init " + tmp.file("config.json") + " --out " + tmp.file("m") +
                               " --dtype bfloat16 --seed 3");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream f(tmp.file("m") + "/config.json");
  EXPECT_EQ(Json::parse(f).at("torch_dtype").get<std::string>(), "bfloat16");
  auto fp32 = testing::run_swarmt("model init " + tmp.file("config.json") + " --out " + tmp.file("f") + " --seed 3");
  ASSERT_EQ(fp32.exit_code, 0) << fp32.err;
  // Two bytes per weight instead of four (the header aside).
  EXPECT_GT(fs::file_size(tmp.file("f") + "/model.safetensors"),
            1.8 * static_cast<double>(fs::file_size(tmp.file("m") + "/model.safetensors")));
  auto bad = testing::run_swarmt("model init " + tmp.file("config.json") + " --out " + tmp.file("b") + " --dtype int3");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--dtype"), std::string::npos) << bad.err;
}

// bench memory reports positive rates in JSON; a buffer that would fit in the caches is refused.
TEST(BenchCli, memory_reports_bandwidth_and_matvec_rates) {
  auto r = testing::run_swarmt("-q bench memory --mib 64 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json j = Json::parse(r.out);
  for (const char* field : {"read_gb_s", "matvec_fp32_gb_s", "matvec_bf16_gb_s"})
    EXPECT_GT(j.at(field).get<double>(), 0.0) << field;
  EXPECT_FALSE(j.at("matvec_isa").get<std::string>().empty());
  auto bad = testing::run_swarmt("bench memory --mib 1");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--mib"), std::string::npos) << bad.err;
  // --isa times a lower kernel level (every CPU has the portable one); an unknown level is refused.
  auto portable = testing::run_swarmt("-q bench memory --mib 64 --isa portable --json");
  ASSERT_EQ(portable.exit_code, 0) << portable.err;
  EXPECT_EQ(Json::parse(portable.out).at("matvec_isa").get<std::string>(), "portable");
  auto unknown = testing::run_swarmt("bench memory --mib 64 --isa sse9");
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("--isa"), std::string::npos) << unknown.err;
}

TEST(BenchCli, kernels_json_has_one_object_per_kernel_length_and_recurrent_chunk_size) {
  testing::TempDir tmp;
  auto r = testing::run_swarmt("-q bench kernels --lengths 128,256 --kernels swa,full,mlstm,gdn --chunks 32,64 "
                               "--seconds 0.01 --json " + tmp.file("k.json"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream f(tmp.file("k.json"));
  const Json j = Json::parse(f);
  for (const char* field : {"gemm_gflops", "fma_peak_gflops", "read_gb_s"})
    EXPECT_GT(j.at(field).get<double>(), 0) << field;
  ASSERT_EQ(j.at("results").size(), 12u);  // 2 lengths x (swa, full, 2 chunks of mlstm, 2 of gdn)
  std::map<std::string, std::set<int64_t>> chunks;
  for (const auto& row : j.at("results")) {
    for (const char* field : {"kernel", "n", "window", "chunk", "fwd_ms", "fwdbwd_ms", "gflops", "gb_s",
                              "fma_peak_fraction", "read_fraction", "peak_mb"})
      EXPECT_TRUE(row.contains(field)) << field << " missing in " << row.dump();
    EXPECT_GT(row.at("fwdbwd_ms").get<double>(), 0);
    chunks[row.at("kernel").get<std::string>()].insert(row.at("chunk").get<int64_t>());
  }
  EXPECT_EQ(chunks["mlstm"], (std::set<int64_t>{32, 64}));
  EXPECT_EQ(chunks["gdn"], (std::set<int64_t>{32, 64}));
  EXPECT_EQ(chunks["swa"], (std::set<int64_t>{0}));
  auto bad_chunk = testing::run_swarmt("bench kernels --kernels mlstm --chunks 0");
  EXPECT_EQ(bad_chunk.exit_code, 2);
  EXPECT_NE(bad_chunk.err.find("--chunks"), std::string::npos) << bad_chunk.err;
  auto bad = testing::run_swarmt("bench kernels --kernels flash");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("flash"), std::string::npos) << bad.err;
}

// Shape options reach every case (the peers' shapes differ from the defaults) and are recorded in the
// JSON; values outside 1..4096 are refused naming the option.
TEST(BenchCli, kernels_run_at_the_shapes_given_on_the_command_line) {
  testing::TempDir tmp;
  auto r = testing::run_swarmt("-q bench kernels --lengths 128 --kernels swa,mlstm --heads 2 --dqk 16 --dv 24 "
                               "--window 32 --chunk 16 --seconds 0.01 --json " + tmp.file("k.json"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream f(tmp.file("k.json"));
  const Json j = Json::parse(f);
  const Json& shapes = j.at("shapes");
  EXPECT_EQ(shapes.at("attention_heads").get<int64_t>(), 2);
  EXPECT_EQ(shapes.at("attention_dim").get<int64_t>(), 16);
  EXPECT_EQ(shapes.at("mlstm_qk").get<int64_t>(), 16);
  EXPECT_EQ(shapes.at("mlstm_v").get<int64_t>(), 24);
  ASSERT_EQ(j.at("results").size(), 2u);
  EXPECT_EQ(j.at("results")[0].at("window").get<int64_t>(), 32);
  EXPECT_EQ(j.at("results")[1].at("chunk").get<int64_t>(), 16);
  for (const std::string bad : {"--heads -1", "--dqk 5000", "--window -3"}) {
    auto refused = testing::run_swarmt("bench kernels --kernels swa " + bad);
    EXPECT_EQ(refused.exit_code, 2) << bad;
    EXPECT_NE(refused.err.find(bad.substr(0, bad.find(' '))), std::string::npos) << refused.err;
  }
}

// bench peak reports the FMA peak, the GEMM rate and the read bandwidth; the bf16 dot peak is 0 exactly
// when the CPU has no AVX-512 BF16. A non-positive time is refused naming the option.
TEST(BenchCli, peak_reports_the_machines_ceilings) {
  auto r = testing::run_swarmt("-q bench peak --seconds 0.05 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json j = Json::parse(r.out);
  for (const char* field : {"fp32_fma_gflops", "fp32_gemm_gflops", "read_gb_s"})
    EXPECT_GT(j.at(field).get<double>(), 0.0) << field;
  EXPECT_EQ(j.at("bf16_dot_gflops").get<double>() > 0, j.at("isa").get<std::string>() == "avx512-bf16");
  auto bad = testing::run_swarmt("bench peak --seconds 0");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--seconds"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace swarmt
