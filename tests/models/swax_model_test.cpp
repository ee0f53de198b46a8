#include "swarmt/models/swax_model.h"

#include <gtest/gtest.h>

#include "swarmt/core/error.h"
#include "swarmt/models/model_io.h"
#include "swarmt/models/registry.h"
#include "swarmt/nn/mlstm_layer.h"
#include "models/decode_paths.h"
#include "test_util.h"
#include "bad_input.h"

namespace swarmt::models {
namespace {

SwaxConfig tiny_config(const std::string& pattern, int64_t window, int64_t mlstm_conv_size = 0) {
  Json j{{"vocab_size", 40},         {"hidden_size", 32},        {"layer_pattern", pattern},
         {"num_attention_heads", 4}, {"num_key_value_heads", 2}, {"head_dim", 8},
         {"sliding_window", window}, {"mlstm_num_heads", 2},     {"gdn_num_heads", 2},
         {"gdn_head_dim", 8},        {"gdn_v_head_dim", 16},     {"mlstm_chunk_size", 4},
         {"gdn_chunk_size", 4},      {"intermediate_size", 48},  {"mlstm_conv_size", mlstm_conv_size}};
  return SwaxConfig::from_json(j, "test.json");
}

// Makes gates and projections less degenerate than the paper init (zero gate weights) so that the
// decode/forward comparison exercises every path.
void randomize(CausalLM& model) {
  at::NoGradGuard no_grad;
  for (auto& p : model.parameters()) p.add_(at::randn_like(p) * 0.2);
}

using testing::error_of;

class DecodeEquivalence : public ::testing::TestWithParam<int64_t> {};

// Streaming (chunked prefill, then one token at a time) gives the same logits as the full forward, for a
// stack with every block type, with windows smaller and larger than the prompt.
TEST_P(DecodeEquivalence, decode_logits_equal_full_forward_logits) {
  torch::manual_seed(1);
  SwaxForCausalLM model(tiny_config("MSGA", GetParam()));
  randomize(model);
  model.to(at::kDouble);
  model.eval();
  at::NoGradGuard no_grad;
  const int64_t n = 23;
  auto tokens = at::randint(0, 40, {1, n}, at::TensorOptions().dtype(at::kLong));
  auto full = model.forward(tokens);

  auto state = model.new_state(1);
  std::vector<at::Tensor> pieces;
  pieces.push_back(model.forward_stateful(tokens.narrow(1, 0, 9), state));  // chunked prefill
  pieces.push_back(model.forward_stateful(tokens.narrow(1, 9, 5), state));
  for (int64_t t = 14; t < n; ++t) pieces.push_back(model.forward_stateful(tokens.narrow(1, t, 1), state));
  EXPECT_EQ(state.position, n);
  EXPECT_TENSORS_CLOSE(at::cat(pieces, 1), full, 1e-9);
}

INSTANTIATE_TEST_SUITE_P(Windows, DecodeEquivalence, ::testing::Values(3, 7, 64));

// The mLSTM's optional short convolution (xLSTM-1's q/k conv) keeps its tail in the streaming state:
// decoding token by token gives the full forward's logits, and the kernel is a checkpoint tensor.
// Every SWAX block decodes on raw buffers with the logits of its tensor ops, bit for bit: the attention
// layers (a ring of 3 slots, a growing cache) with their own raw path, mLSTM and Gated DeltaNet through
// their tensor ops between the raw norms and MLP.
TEST(SwaxModel, decoding_on_raw_buffers_equals_the_tensor_ops_bit_for_bit) {
  torch::manual_seed(2);
  SwaxForCausalLM model(tiny_config("MSGA", 3));
  randomize(model);
  const int64_t n = 13;
  const auto tokens = at::randint(40, {1, n}, at::kLong);
  for (auto dtype : {at::kFloat, at::kBFloat16}) {
    SCOPED_TRACE(dtype == at::kFloat ? "fp32" : "bf16");
    model.to(dtype);
    const nn::RawDecodeSteps steps = testing::expect_raw_decode_equals_tensor_decode(model, tokens);
    EXPECT_EQ(steps.blocks, 4 * n);
    EXPECT_EQ(steps.mixers, 2 * n);  // S and A
  }
}

TEST(SwaxModel, mlstm_short_conv_streams_exactly_and_is_saved) {
  torch::manual_seed(2);
  SwaxForCausalLM model(tiny_config("MS", 5, /*mlstm_conv_size=*/4));
  randomize(model);
  model.to(at::kDouble);
  model.eval();
  at::NoGradGuard no_grad;
  auto tokens = at::randint(0, 40, {2, 17}, at::TensorOptions().dtype(at::kLong));
  auto full = model.forward(tokens);
  auto state = model.new_state(2);
  std::vector<at::Tensor> pieces{model.forward_stateful(tokens.narrow(1, 0, 6), state)};
  for (int64_t t = 6; t < 17; ++t) pieces.push_back(model.forward_stateful(tokens.narrow(1, t, 1), state));
  EXPECT_TENSORS_CLOSE(at::cat(pieces, 1), full, 1e-9);
  bool named = false;
  for (const auto& [name, tensor] : model.checkpoint_tensors()) named = named || name == "model.layers.0.mlstm.qk_conv";
  EXPECT_TRUE(named);
  EXPECT_EQ(model.config_json()["mlstm_conv_size"], 4);
}

TEST(SwaxModel, sliding_window_state_does_not_grow_with_context) {
  SwaxForCausalLM model(tiny_config("MSGS", 4));
  model.eval();
  at::NoGradGuard no_grad;
  auto state = model.new_state(1);
  auto tokens = at::randint(0, 40, {1, 8}, at::TensorOptions().dtype(at::kLong));
  model.forward_stateful(tokens, state);
  const int64_t after_8 = state.bytes();
  for (int i = 0; i < 8; ++i) model.forward_stateful(tokens, state);
  EXPECT_EQ(state.bytes(), after_8);
}

TEST(SwaxModel, window_override_changes_only_sliding_layers) {
  torch::manual_seed(2);
  SwaxForCausalLM model(tiny_config("SA", 4));
  randomize(model);
  at::NoGradGuard no_grad;
  auto tokens = at::randint(0, 40, {1, 12}, at::TensorOptions().dtype(at::kLong));
  ForwardOptions narrow, wide;
  narrow.window = 2;
  wide.window = 12;
  auto a = model.forward(tokens, narrow), b = model.forward(tokens, wide), c = model.forward(tokens);
  EXPECT_FALSE(at::allclose(a, b));
  // Positions inside the smallest window see the same keys under every window.
  EXPECT_TENSORS_CLOSE(a.narrow(1, 0, 2), b.narrow(1, 0, 2), 1e-5);
  EXPECT_TENSORS_CLOSE(c.narrow(1, 0, 4), b.narrow(1, 0, 4), 1e-5);
}

// An inference window override (after stochastic window training, or generate --window) is part of
// the model's config: a saved model runs at that window.
TEST(SwaxModel, an_inference_window_override_is_kept_in_the_config) {
  SwaxForCausalLM model(tiny_config("MSAS", 4));
  model.set_inference_window(9);
  EXPECT_EQ(model.inference_window(), 9);
  EXPECT_EQ(model.config_json()["sliding_window"], 9);
  SwaxForCausalLM no_sliding(tiny_config("MA", 4));
  no_sliding.set_inference_window(9);
  EXPECT_EQ(no_sliding.inference_window(), 0);
  EXPECT_EQ(no_sliding.config_json()["sliding_window"], 4);
}

TEST(SwaxModel, tensor_names_follow_the_documented_layout) {
  SwaxForCausalLM model(tiny_config("MSGA", 4));
  std::set<std::string> names;
  for (const auto& [name, t] : model.checkpoint_tensors()) names.insert(name);
  for (const char* expected :
       {"model.embed_tokens.weight", "model.norm.weight", "lm_head.weight", "model.layers.0.mlstm.q_proj.weight",
        "model.layers.0.mlstm.igate_proj.bias", "model.layers.0.mlstm.head_norm.weight",
        "model.layers.1.self_attn.q_proj.weight", "model.layers.2.gdn.A_log", "model.layers.2.gdn.q_conv",
        "model.layers.3.self_attn.o_proj.weight", "model.layers.3.mlp.down_proj.weight",
        "model.layers.3.input_layernorm.weight", "model.layers.3.post_attention_layernorm.weight"})
    EXPECT_TRUE(names.count(expected)) << expected;
}

TEST(SwaxModel, initialisation_follows_the_xlstm_recipe) {
  SwaxForCausalLM model(tiny_config("MS", 4));
  auto& block = dynamic_cast<nn::HybridBlock&>(model.layer(0));
  auto& mlstm = block.mixer_as<nn::MLSTMLayerImpl>();
  EXPECT_TRUE(at::all(mlstm.igate_proj->bias == -10.0).item<bool>());
  EXPECT_TRUE(at::allclose(mlstm.fgate_proj->bias, at::linspace(3.0, 6.0, 2)));
  EXPECT_EQ(mlstm.igate_proj->weight.abs().sum().item<double>(), 0.0);
  EXPECT_EQ(mlstm.ogate_proj->weight.abs().sum().item<double>(), 0.0);
  double std = model.model->embed_tokens->weight.std().item<double>();
  EXPECT_NEAR(std, std::sqrt(2.0 / (5.0 * 32)), 0.03);
}

TEST(SwaxModel, save_and_load_round_trip) {
  testing::TempDir dir;
  torch::manual_seed(3);
  SwaxForCausalLM model(tiny_config("MSGA", 4));
  randomize(model);
  save_model(model, dir.path());
  auto loaded = load_model(dir.path());
  at::NoGradGuard no_grad;
  auto tokens = at::randint(0, 40, {2, 10}, at::TensorOptions().dtype(at::kLong));
  EXPECT_TENSORS_CLOSE(loaded->forward(tokens), model.forward(tokens), 0.0);
  EXPECT_EQ(loaded->config_json(), model.config_json());
}

TEST(SwaxConfig, pattern_unit_is_repeated_to_the_layer_count) {
  auto c = SwaxConfig::from_json(Json{{"layer_pattern", "MS"}, {"num_hidden_layers", 6}}, "c.json");
  EXPECT_EQ(c.layer_pattern, "MSMSMS");
  EXPECT_EQ(c.to_json()["num_hidden_layers"], 6);
}

TEST(SwaxConfig, malformed_configs_name_the_field) {
  EXPECT_EQ(error_of([] { SwaxConfig::from_json(Json{{"layer_pattern", "MXS"}}, "c.json"); }),
            "c.json: field 'layer_pattern' may only contain S (sliding-window attention), A (full attention), M "
            "(mLSTM) and G (Gated DeltaNet); got 'X' in \"MXS\"");
  EXPECT_EQ(error_of([] { SwaxConfig::from_json(Json{{"hidden_size", "big"}}, "c.json"); }),
            "c.json: field 'hidden_size' must be an integer (got \"big\")");
  EXPECT_EQ(error_of([] { SwaxConfig::from_json(Json{{"num_attention_heads", 4}, {"num_key_value_heads", 3}}, "c.json"); }),
            "c.json: field 'num_key_value_heads' (3) must divide num_attention_heads (4)");
  EXPECT_EQ(error_of([] { SwaxConfig::from_json(Json{{"sliding_window", 0}}, "c.json"); }),
            "c.json: field 'sliding_window' must be in [1, 16777216] (got 0)");
  EXPECT_EQ(error_of([] { SwaxConfig::from_json(Json{{"hiden_size", 3}}, "c.json"); }),
            "c.json: field 'hiden_size' is not a known field");
  EXPECT_EQ(error_of([] { SwaxConfig::from_json(Json{{"layer_pattern", "MS"}, {"num_hidden_layers", 5}}, "c.json"); }),
            "c.json: field 'num_hidden_layers' (5) must be a multiple of the layer_pattern length (2)");
  EXPECT_EQ(error_of([] { create_model(Json{{"model_type", "mamba"}}, "c.json"); }),
            "c.json: field 'model_type' 'mamba' is not supported (supported: " + supported_model_types() + ")");
}

}  // namespace
}  // namespace swarmt::models
