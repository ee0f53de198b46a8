// Requests checked against available memory before allocating: the limit's sources, and the messages
// that say what would fit, for training (batch rows), model creation and model loading.
#include "swarmt/core/memory_budget.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "bad_input.h"
#include "swarmt/infer/generate.h"
#include "swarmt/models/armt_model.h"
#include "swarmt/models/model_footprint.h"
#include "swarmt/models/model_io.h"
#include "swarmt/models/registry.h"
#include "swarmt/train/train_setup.h"
#include "test_util.h"

namespace swarmt {
namespace {

// Sets SWARMT_MEMORY_LIMIT for the scope of a test.
struct MemoryLimit {
  explicit MemoryLimit(const char* value) { ::setenv("SWARMT_MEMORY_LIMIT", value, 1); }
  ~MemoryLimit() { ::unsetenv("SWARMT_MEMORY_LIMIT"); }
};

TEST(MemoryBudget, the_machine_reports_available_memory_and_the_override_wins) {
  EXPECT_GT(available_memory_bytes(), 0);
  MemoryLimit limit("1.5G");
  EXPECT_EQ(available_memory_bytes(), int64_t{3} << 29);
  EXPECT_EQ(format_bytes(int64_t{3} << 29), "1.5 GiB");
  EXPECT_EQ(format_bytes(int64_t{512} << 20), "512.0 MiB");
}

TEST(MemoryBudget, a_malformed_override_is_rejected) {
  MemoryLimit limit("lots");
  EXPECT_EQ(testing::bad_input_message([] { available_memory_bytes(); }),
            "SWARMT_MEMORY_LIMIT: 'lots' is not a size (bytes, or with K, M, G)");
}

Json training_config(int64_t batch) {
  Json config = Json::parse(R"({
    "model": {"hidden_size": 64, "layer_pattern": "MS", "num_hidden_layers": 2, "num_attention_heads": 2,
              "head_dim": 32, "sliding_window": 64, "mlstm_num_heads": 2, "mlstm_qk_head_dim": 16,
              "mlstm_v_head_dim": 32, "intermediate_size": 128},
    "sequence_length": 4096,
    "data": {"train": {"type": "synthetic", "loss": "all", "tasks": [{"task": "essay"}]}},
    "training": {"max_steps": 1}
  })");
  config["training"]["batch_size"] = batch;
  return config;
}

TEST(MemoryBudget, a_batch_that_cannot_fit_is_refused_with_the_grad_accum_that_fits) {
  MemoryLimit limit("64M");
  // Per row: 4096 × (64·64·2 + 8·259) ≈ 40 MiB, so one row fits and 16 do not.
  const std::string message =
      testing::bad_input_message([] { train::make_lm_training(training_config(16), "t.json", at::kCPU); });
  EXPECT_NE(message.find("t.json: training (16 rows of 4096 tokens per micro-batch) needs about"), std::string::npos)
      << message;
  EXPECT_NE(message.find("only 64.0 MiB is available; at most 1 rows per micro-batch fit: set training.grad_accum to 16"),
            std::string::npos)
      << message;
  EXPECT_NO_THROW(train::make_lm_training(training_config(1), "t.json", at::kCPU));
}

TEST(MemoryBudget, a_model_too_large_to_allocate_is_refused_before_allocation) {
  MemoryLimit limit("64M");
  Json config = training_config(1);
  config["model"]["hidden_size"] = 1024;  // ~25 M parameters: ~100 MiB in fp32
  config["model"]["head_dim"] = 512;
  config["model"]["mlstm_qk_head_dim"] = 256;
  config["model"]["mlstm_v_head_dim"] = 512;
  config["model"]["intermediate_size"] = 2752;
  const std::string message = testing::bad_input_message([&] { train::make_lm_training(config, "t.json", at::kCPU); });
  EXPECT_NE(message.find("t.json: field 'model': the model (about "), std::string::npos) << message;
  EXPECT_NE(message.find("MiB of memory but only 64.0 MiB is available; choose a smaller model"), std::string::npos)
      << message;
}

TEST(MemoryBudget, a_user_given_count_is_checked_before_anything_is_allocated) {
  MemoryLimit limit("1G");
  EXPECT_EQ(testing::bad_input_message([] {
              check_count_fits(1000000000000, static_cast<double>(kMinBytesPerContextToken), "--lengths", "token",
                               "choose shorter lengths");
            }),
            "--lengths: 1000000000000 tokens need about 14.6 TiB of memory (16 B per token) but only 1.0 GiB is "
            "available; choose shorter lengths");
  EXPECT_EQ(testing::bad_input_message([] { check_count_fits(0, 16, "--segments", "segment", ""); }),
            "--segments: 0 must be positive");
  EXPECT_EQ(testing::bad_input_message([] { check_count_fits(-5, 16, "--segments", "segment", ""); }),
            "--segments: -5 must be positive");
  EXPECT_NO_THROW(check_count_fits(4096, 16, "--lengths", "token", ""));
}

TEST(MemoryBudget, a_config_describing_more_parameters_than_int64_counts_is_refused) {
  // 4096 layers of 2^24-wide attention and MLP: 7·2^60 parameters, more bytes than an int64 holds.
  // Counted by allocating, this was an OOM; counted in int64, a wrap-around.
  const Json config = Json::parse(R"({"model_type": "llama", "hidden_size": 16777216, "intermediate_size": 16777216,
      "num_hidden_layers": 4096, "num_attention_heads": 4096, "head_dim": 4096, "vocab_size": 16777216})");
  const std::string message = testing::bad_input_message([&] { models::check_model_fits(config, "big.json"); });
  EXPECT_NE(message.find("big.json: the model (about 8.07e+18 parameters) needs about"), std::string::npos) << message;
  EXPECT_NE(message.find("choose a smaller model"), std::string::npos) << message;
}

TEST(MemoryBudget, a_sliding_window_beyond_any_context_is_refused_at_config_validation) {
  const std::string message = testing::bad_input_message([] {
    models::create_model(Json{{"model_type", "swax"}, {"layer_pattern", "S"}, {"sliding_window", int64_t{1} << 40}},
                         "c.json");
  });
  EXPECT_NE(message.find("c.json: field 'sliding_window'"), std::string::npos) << message;
}

TEST(MemoryBudget, a_kv_ring_that_cannot_fit_is_refused_before_allocation) {
  auto model = models::create_model(Json{{"model_type", "swax"}, {"hidden_size", 64}, {"layer_pattern", "S"},
                                         {"num_attention_heads", 2}, {"head_dim", 32}, {"sliding_window", 64}},
                                    "c.json");
  model->set_inference_window(int64_t{1} << 24);  // 2 heads × 32 × 2 (k, v) × 4 B + 8 B per slot: 8.1 GiB
  MemoryLimit limit("1G");
  const std::string message = testing::bad_input_message([&] { model->new_state(1); });
  EXPECT_NE(message.find("the KV ring of a sliding-window layer (16777216 slots: the window) needs about 8.1 GiB"),
            std::string::npos)
      << message;
}

TEST(MemoryBudget, loading_a_model_larger_than_memory_is_refused) {
  testing::TempDir tmp;
  auto model = models::create_model(Json{{"model_type", "swax"}, {"hidden_size", 256}, {"layer_pattern", "MS"}},
                                    "c.json");
  models::save_model(*model, tmp.path());
  MemoryLimit limit("1M");
  const std::string message = testing::bad_input_message([&] { models::load_model(tmp.path()); });
  EXPECT_NE(message.find("loading " + tmp.path() + " ("), std::string::npos) << message;
  EXPECT_NE(message.find("but only 1.0 MiB is available"), std::string::npos) << message;
}

std::shared_ptr<models::CausalLM> tiny_llama() {
  return models::create_model(Json::parse(R"({"model_type": "llama", "hidden_size": 32, "num_hidden_layers": 2,
      "num_attention_heads": 2, "num_key_value_heads": 2, "head_dim": 16, "intermediate_size": 64,
      "vocab_size": 64})"), "llama.json");
}

TEST(MemoryBudget, predicted_state_growth_equals_the_state_after_the_tokens) {
  at::NoGradGuard no_grad;
  auto check = [](models::CausalLM& model, int64_t tokens) {
    auto state = model.new_state(1);
    model.forward_stateful(at::randint(0, 64, {1, 3}), state);
    const int64_t predicted = state.bytes_after(tokens);
    model.forward_stateful(at::randint(0, 64, {1, tokens}), state);
    EXPECT_EQ(state.bytes(), predicted) << model.model_type() << " after " << tokens << " tokens";
  };
  auto llama = tiny_llama();
  check(*llama, 37);  // a growing KV cache: 2 layers × (K and V of 2 heads × 16 floats + a position)
  auto swax = models::create_model(Json{{"model_type", "swax"}, {"hidden_size", 32}, {"layer_pattern", "MS"},
                                        {"sliding_window", 8}, {"vocab_size", 64}},
                                   "swax.json");
  check(*swax, 37);  // a ring and a recurrent state: constant
  models::ArmtConfig armt;
  armt.segment_size = 16;
  armt.num_memory_tokens = 2;
  armt.d_mem = 8;
  models::ArmtModel wrapped(llama, armt);
  auto state = wrapped.new_state(1);
  // Within the active segment the base cache grows token by token; past it, one full segment
  // (16 tokens + 2 memory tokens) is the most it ever holds, for any input length.
  EXPECT_LT(state.bytes_after(5), state.bytes_after(18));
  EXPECT_EQ(state.bytes_after(18), state.bytes_after(1'000'000));
}

TEST(MemoryBudget, generating_past_what_the_kv_cache_can_hold_is_refused_with_what_fits) {
  at::NoGradGuard no_grad;
  infer::CausalLMStream stream(tiny_llama());
  // 2 layers × (2 × 2 heads × 16 floats × 4 B + 8 B) = 528 B per token: 1 MiB holds 1985 tokens.
  MemoryLimit limit("1M");
  infer::GenerateOptions options;
  options.max_new_tokens = 100;
  const std::string message = testing::bad_input_message(
      [&] { infer::generate(stream, std::vector<int64_t>(10'000, 1), options); });
  EXPECT_NE(message.find("generating 10000 prompt + 100 new tokens (10100 tokens; the KV cache of its full-attention "
                         "layers grows by 0.5 KiB per token) needs about"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("about 1985 tokens fit"), std::string::npos) << message;
  EXPECT_EQ(stream.position(), 0);  // refused before running anything
  options.max_new_tokens = 2;
  EXPECT_EQ(infer::generate(stream, std::vector<int64_t>(500, 1), options).prompt_tokens, 500);
}

}  // namespace
}  // namespace swarmt
