// Weights holding NaN or Inf are found when a model loads: `info` reports them, `generate`, `forward`,
// `eval` and `armt init` refuse them naming the file and the tensor (and write nothing), unless
// --allow-nonfinite.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "swarmt/core/json.h"
#include "swarmt/core/safetensors_torch.h"
#include "test_util.h"

namespace fs = std::filesystem;

namespace swarmt {
namespace {

using testing::run_swarmt;

struct NonFiniteCli : ::testing::Test {
  void SetUp() override {
    testing::write_file(tmp.file("base.json"), R"({"model_type": "llama", "hidden_size": 32, "num_hidden_layers": 2,
      "num_attention_heads": 2, "num_key_value_heads": 2, "head_dim": 16, "intermediate_size": 64,
      "vocab_size": 259, "tie_word_embeddings": true, "bos_token_id": 257, "eos_token_id": 258, "pad_token_id": 256})");
    auto r = run_swarmt("model init " + tmp.file("base.json") + " --out " + model());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    // One NaN in the embedding, as a diverged run or a damaged download leaves it.
    auto weights = load_safetensors(model() + "/model.safetensors");
    NamedTensors poisoned;
    for (auto& [name, tensor] : weights) {
      at::Tensor copy = tensor.clone();
      if (name == kEmbedding) copy[3][5] = NAN;
      poisoned.emplace_back(name, copy);
    }
    save_safetensors(model() + "/model.safetensors", poisoned);
  }
  std::string model() const { return tmp.file("nan_model"); }
  static constexpr const char* kEmbedding = "model.embed_tokens.weight";
  std::string refusal() const {
    return model() + "/model.safetensors: tensor '" + kEmbedding + "' holds 1 NaN or infinite values (of 8288)";
  }
  testing::TempDir tmp;
};

TEST_F(NonFiniteCli, info_reports_the_tensor) {
  auto r = run_swarmt("info " + model());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(std::string("WARNING: tensor ") + kEmbedding + " holds 1 NaN or infinite values (of 8288)"),
            std::string::npos)
      << r.out;
  auto j = run_swarmt("info " + model() + " --json");
  ASSERT_EQ(j.exit_code, 0) << j.err;
  const Json report = Json::parse(j.out);
  ASSERT_EQ(report["nonfinite_tensors"].size(), 1u);
  EXPECT_EQ(report["nonfinite_tensors"][0]["name"], kEmbedding);
  EXPECT_EQ(report["nonfinite_tensors"][0]["nonfinite_values"], 1);
}

TEST_F(NonFiniteCli, generate_refuses_the_model_unless_allowed) {
  auto r = run_swarmt("generate --model " + model() + " --prompt 'Hello' -n 4");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(refusal()), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("pass --allow-nonfinite"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << "nothing generated";
  auto allowed = run_swarmt("generate --model " + model() + " --prompt 'Hello' -n 4 --allow-nonfinite");
  EXPECT_EQ(allowed.exit_code, 0) << allowed.err;
}

TEST_F(NonFiniteCli, forward_eval_and_armt_init_refuse_it_and_write_nothing) {
  auto forward = run_swarmt("forward --model " + model() + " --ids 1,2,3 --out " + tmp.file("logits.safetensors"));
  EXPECT_EQ(forward.exit_code, 2);
  EXPECT_NE(forward.err.find(refusal()), std::string::npos) << forward.err;
  EXPECT_FALSE(fs::exists(tmp.file("logits.safetensors")));

  auto eval = run_swarmt("-q eval passkey --model " + model() + " --lengths 256 --samples 1 --out " + tmp.file("eval"));
  EXPECT_EQ(eval.exit_code, 2);
  EXPECT_NE(eval.err.find(refusal()), std::string::npos) << eval.err;
  EXPECT_FALSE(fs::exists(tmp.file("eval")));

  testing::write_file(tmp.file("armt.json"), R"({"segment_size": 64, "num_memory_tokens": 2, "d_mem": 8})");
  auto init = run_swarmt("armt init --base " + model() + " --config " + tmp.file("armt.json") + " --out " +
                         tmp.file("adapter"));
  EXPECT_EQ(init.exit_code, 2);
  EXPECT_NE(init.err.find(refusal()), std::string::npos) << init.err;
  EXPECT_FALSE(fs::exists(tmp.file("adapter")));
}

}  // namespace
}  // namespace swarmt
