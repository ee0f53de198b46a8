// The real swarmt binary: help, `info` on good and bad files and model directories, `bench gemm`.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <thread>

#include "swarmt/core/json.h"
#include "swarmt/core/safetensors_torch.h"
#include "test_util.h"

namespace fs = std::filesystem;

namespace swarmt {
namespace {

TEST(InfoCli, help_lists_the_commands) {
  auto r = testing::run_swarmt("--help");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("info"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("bench"), std::string::npos) << r.out;
  auto info_help = testing::run_swarmt("info --help");
  EXPECT_EQ(info_help.exit_code, 0);
  EXPECT_NE(info_help.out.find("--json"), std::string::npos);
}

TEST(InfoCli, info_on_a_file_prints_every_tensor_and_the_totals) {
  testing::TempDir tmp;
  save_safetensors(tmp.file("tiny.safetensors"),
                   {{"model.embed_tokens.weight", at::zeros({10, 4}, at::kBFloat16)}, {"model.norm.weight", at::ones({4})}},
                   {{"format", "pt"}});
  auto r = testing::run_swarmt("info " + tmp.file("tiny.safetensors"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("model.embed_tokens.weight"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("BF16"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("[10, 4]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("model.norm.weight"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("total: 2 tensors, 44 parameters, 96 bytes"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("metadata: format=pt"), std::string::npos) << r.out;
}

TEST(InfoCli, info_json_describes_a_sharded_directory_with_its_config) {
  testing::TempDir tmp;
  const std::string dir = tmp.file("model");
  save_safetensors_model(dir, {{"a", at::zeros({8})}, {"b", at::zeros({8})}, {"c", at::zeros({2, 2}, at::kLong)}}, {},
                         /*max_shard_bytes=*/40);
  testing::write_file(dir + "/config.json",
                      R"({"model_type": "llama", "architectures": ["LlamaForCausalLM"], "hidden_size": 960,
                          "num_hidden_layers": 32, "vocab_size": 49152, "torch_dtype": "bfloat16", "unrelated": 1})");
  testing::write_file(dir + "/armt_config.json", R"({"num_memory_tokens": 16, "segment_length": 1024})");
  auto r = testing::run_swarmt("info --json " + dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json out = parse_json(r.out, "info output");
  EXPECT_EQ(out["sharded"], true);
  EXPECT_EQ(out["files"].size(), 3u);
  EXPECT_EQ(out["total_tensors"], 3);
  EXPECT_EQ(out["total_parameters"], 20);
  EXPECT_EQ(out["total_bytes"], 96);
  EXPECT_EQ(out["config"]["model_type"], "llama");
  EXPECT_EQ(out["config"]["num_hidden_layers"], 32);
  EXPECT_FALSE(out["config"].contains("unrelated"));
  EXPECT_EQ(out["armt_config"]["num_memory_tokens"], 16);
  ASSERT_EQ(out["tensors"].size(), 3u);
  EXPECT_EQ(out["tensors"][2]["name"], "c");
  EXPECT_EQ(out["tensors"][2]["dtype"], "I64");
  EXPECT_EQ(out["tensors"][2]["shape"], Json::array({2, 2}));

  auto text = testing::run_swarmt("info " + dir);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("config.json: "), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("hidden_size=960"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("model-00002-of-00003.safetensors"), std::string::npos) << text.out;
}

TEST(InfoCli, openblas_workers_sleep_soon_unless_the_user_chose_otherwise) {
  // swarmt restarts itself once with OPENBLAS_THREAD_TIMEOUT=16 (and passive OpenMP waiting after a
  // short spin) when the user set neither; a user's own values are kept.
  const std::string clean = "env -u OPENBLAS_THREAD_TIMEOUT -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT "
                            "-u SWARMT_NO_BLAS_SWITCH "
                            "-u SWARMT_BLAS_SWITCHED_FROM -u SWARMT_BLAS_REJECTED OMP_NUM_THREADS=1 ";
  auto run = [&](const std::string& env) {
    auto r = testing::run_shell(clean + env + " " + SWARMT_BINARY + " --threads 1 info --system --json");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return parse_json(r.out, "info output");
  };
  const Json chosen = run("");
  EXPECT_EQ(chosen["omp_wait_policy"], "PASSIVE");
  EXPECT_EQ(chosen["omp_spin_count"], "10000");
  EXPECT_EQ(chosen["openblas_thread_timeout"], chosen["blas_is_openblas"].get<bool>() ? "16" : "");
  const Json user = run("OPENBLAS_THREAD_TIMEOUT=20 OMP_WAIT_POLICY=ACTIVE");
  EXPECT_EQ(user["omp_wait_policy"], "ACTIVE");
  EXPECT_EQ(user["omp_spin_count"], "");  // a user's policy comes with libgomp's own spin count
  EXPECT_EQ(user["openblas_thread_timeout"], "20");
  const Json spin = run("GOMP_SPINCOUNT=5");
  EXPECT_EQ(spin["omp_wait_policy"], "PASSIVE");
  EXPECT_EQ(spin["omp_spin_count"], "5");
}

TEST(InfoCli, omp_num_threads_is_the_default_thread_count_and_threads_overrides_it) {
  auto threads = [](const std::string& env, const std::string& options) {
    auto r = testing::run_shell("env " + env + " " + SWARMT_BINARY + " " + options + " info --system --json");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return parse_json(r.out, "info output")["intra_op_threads"].get<int>();
  };
  EXPECT_EQ(threads("OMP_NUM_THREADS=1", ""), 1);
  EXPECT_EQ(threads("OMP_NUM_THREADS=3", "--threads 1"), 1);
  EXPECT_EQ(threads("OMP_NUM_THREADS=1", "--threads 2"), 2);  // up to 4 per core: valid on any machine
  auto bad = testing::run_shell("env OMP_NUM_THREADS=two " + std::string(SWARMT_BINARY) + " info --system");
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
  EXPECT_NE(bad.err.find("OMP_NUM_THREADS: 'two'"), std::string::npos) << bad.err;
}

// swarmt's own kernels split their work with at::parallel_for, which is serial in code compiled without
// OpenMP; `info` counts the threads it actually ran on. This test is compiled with the library's flags.
TEST(InfoCli, reports_the_threads_swarmts_kernels_run_on) {
  const int threads = std::min(2, static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
  auto r = testing::run_shell(std::string(SWARMT_BINARY) + " --threads " + std::to_string(threads) +
                              " info --system --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json info = parse_json(r.out, "info output");
  EXPECT_EQ(info["intra_op_threads"], threads);
#ifdef _OPENMP
  EXPECT_EQ(info["kernel_threads"], threads);
#else
  EXPECT_EQ(info["kernel_threads"], 1);
#endif
}

TEST(InfoCli, info_on_a_bad_file_exits_2_naming_the_file) {
  testing::TempDir tmp;
  testing::write_file(tmp.file("broken.safetensors"), std::string("\x10\x00\x00\x00\x00\x00\x00\x00{\"a\": 1}", 16));
  auto r = testing::run_swarmt("info " + tmp.file("broken.safetensors"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("broken.safetensors: "), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("terminate"), std::string::npos) << r.err;

  auto missing = testing::run_swarmt("info " + tmp.file("absent"));
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("absent: no such file or directory"), std::string::npos) << missing.err;
}

TEST(InfoCli, info_on_a_directory_with_a_broken_config_names_it) {
  testing::TempDir tmp;
  save_safetensors_model(tmp.path(), {{"a", at::zeros({2})}});
  testing::write_file(tmp.file("config.json"), "{\"model_type\": ");
  auto r = testing::run_swarmt("info " + tmp.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("config.json: not valid JSON"), std::string::npos) << r.err;
}

TEST(BenchCli, gemm_json_reports_a_rate_and_compare_accepts_identical_products) {
  testing::TempDir tmp;
  auto r = testing::run_swarmt("bench gemm --size 48 --seconds 0.01 --json --out " + tmp.file("p.safetensors"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json out = parse_json(r.out, "bench output");
  EXPECT_TRUE(out["gflops"].is_number());
  EXPECT_EQ(out["size"], 48);
  fs::copy_file(tmp.file("p.safetensors"), tmp.file("q.safetensors"));
  auto same = testing::run_swarmt("bench gemm --compare " + tmp.file("p.safetensors") + " " + tmp.file("q.safetensors"));
  EXPECT_EQ(same.exit_code, 0) << same.err;
}

TEST(BenchCli, compare_rejects_a_product_off_by_more_than_rounding) {
  testing::TempDir tmp;
  auto r = testing::run_swarmt("bench gemm --size 32 --seconds 0.01 --out " + tmp.file("p.safetensors"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto tensors = load_safetensors(tmp.file("p.safetensors"));
  at::Tensor c = tensors.at("c").clone();
  c[3][5] += 1e-3 * c.abs().max().item<float>();
  save_safetensors(tmp.file("wrong.safetensors"), {{"a", tensors.at("a")}, {"b", tensors.at("b")}, {"c", c}});
  auto diff = testing::run_swarmt("bench gemm --compare " + tmp.file("p.safetensors") + " " + tmp.file("wrong.safetensors"));
  EXPECT_EQ(diff.exit_code, 2);
  EXPECT_NE(diff.err.find("'c' differs beyond fp32 rounding at [3, 5]"), std::string::npos) << diff.err;
}

TEST(BenchCli, bad_arguments_exit_2) {
  EXPECT_EQ(testing::run_swarmt("bench gemm --size 0").exit_code, 2);
  EXPECT_EQ(testing::run_swarmt("bench").exit_code, 2);
}

}  // namespace
}  // namespace swarmt
