// The SWAX mixer table (models/swax_mixers.h): a new token mixer is one nn::Mixer and one table entry.
// The toy mixer here, registered under the letter T, goes through everything the built-in kinds do:
// config validation, model building, full and streaming forward, checkpoint names, summaries.
#include <gtest/gtest.h>

#include <set>

#include "bad_input.h"
#include "swarmt/models/model_footprint.h"
#include "swarmt/models/registry.h"
#include "swarmt/models/swax_mixers.h"
#include "swarmt/models/swax_model.h"
#include "swarmt/models/swax_summary.h"
#include "swarmt/nn/mixer.h"
#include "test_util.h"

namespace swarmt::mixer_table_test {

using models::SwaxConfig;
using models::SwaxMixerKind;

// Streaming state of the toy mixer: the running sum of its inputs and how many there were.
struct CumulativeMeanState : nn::LayerState {
  at::Tensor sum;  // (B, d)
  int64_t count = 0;
  int64_t bytes() const override { return sum.numel() * static_cast<int64_t>(sum.element_size()); }
  void fields(nn::StateFields& f) override {
    f.tensor("sum", sum);
    f.integer("count", count);
  }
};

// A causal cumulative mean with one projection: y_t = W · (1 / (t + 1)) Σ_{s ≤ t} x_s.
// (It ignores document boundaries: enough for a toy.)
class CumulativeMean : public nn::Mixer {
 public:
  explicit CumulativeMean(int64_t hidden) : hidden_(hidden) {
    proj = register_module("proj", torch::nn::Linear(torch::nn::LinearOptions(hidden, hidden).bias(false)));
  }

  at::Tensor forward(const at::Tensor& x, const nn::LayerContext&) override {
    return mean_then_project(x.cumsum(1), /*first_count=*/1);
  }

  at::Tensor forward_stateful(const at::Tensor& x, nn::LayerState& state) override {
    auto& s = dynamic_cast<CumulativeMeanState&>(state);
    auto sums = s.sum.unsqueeze(1) + x.cumsum(1);  // (B, n, d)
    auto y = mean_then_project(sums, s.count + 1);
    s.sum = sums.select(1, -1);
    s.count += x.size(1);
    return y;
  }

  std::unique_ptr<nn::LayerState> new_state(int64_t batch, at::ScalarType dtype, at::Device device) const override {
    auto state = std::make_unique<CumulativeMeanState>();
    state->sum = at::zeros({batch, hidden_}, at::TensorOptions().dtype(dtype).device(device));
    return state;
  }

  bool is_recurrent() const override { return true; }
  void reset_parameters(int64_t) override {
    at::NoGradGuard no_grad;
    proj->weight.normal_(0.0, 0.02);
  }
  int64_t state_values(int64_t) const override { return hidden_ + 1; }
  double mixing_flops_per_token(int64_t) const override { return 2.0 * static_cast<double>(hidden_); }

  torch::nn::Linear proj{nullptr};

 private:
  // sums: (B, n, d) prefix sums; the first of them covers `first_count` tokens.
  at::Tensor mean_then_project(const at::Tensor& sums, int64_t first_count) {
    auto counts = at::arange(first_count, first_count + sums.size(1), sums.options()).view({1, -1, 1});
    return proj->forward(sums / counts);
  }

  int64_t hidden_;
};

SwaxMixerKind cumulative_mean_kind() {
  return {'T', "cumulative_mean", "causal cumulative mean",
          [](const SwaxConfig& c) -> std::shared_ptr<nn::Mixer> {
            return std::make_shared<CumulativeMean>(c.hidden_size);
          },
          [](const SwaxConfig& c) { return static_cast<double>(c.hidden_size) * static_cast<double>(c.hidden_size); }};
}

// Registers a kind for the lifetime of a test, so that the other tests see the built-in table.
class RegisteredKind {
 public:
  explicit RegisteredKind(SwaxMixerKind kind) : letter_(kind.letter) { models::register_mixer_kind(std::move(kind)); }
  ~RegisteredKind() { models::unregister_mixer_kind(letter_); }
  RegisteredKind(const RegisteredKind&) = delete;
  RegisteredKind& operator=(const RegisteredKind&) = delete;

 private:
  char letter_;
};

Json tiny_config(const std::string& pattern) {
  return Json{{"model_type", "swax"},    {"vocab_size", 40},      {"hidden_size", 32},     {"layer_pattern", pattern},
              {"num_attention_heads", 4}, {"num_key_value_heads", 2}, {"head_dim", 8},    {"sliding_window", 4},
              {"mlstm_num_heads", 2},    {"mlstm_chunk_size", 4}, {"intermediate_size", 48}};
}

TEST(MixerTable, a_fourth_mixer_needs_one_file_and_one_table_entry) {
  RegisteredKind toy(cumulative_mean_kind());
  torch::manual_seed(4);
  auto model = models::create_model(tiny_config("TSMT"), "toy.json");
  {
    at::NoGradGuard no_grad;
    for (auto& p : model->parameters()) p.add_(at::randn_like(p) * 0.2);
  }
  model->to(at::kDouble);
  model->eval();
  at::NoGradGuard no_grad;
  const int64_t n = 11;
  auto tokens = at::randint(0, 40, {2, n}, at::TensorOptions().dtype(at::kLong));
  auto full = model->forward(tokens);

  // A prefill chunk, then token by token.
  auto state = model->new_state(2);
  std::vector<at::Tensor> pieces{model->forward_stateful(tokens.narrow(1, 0, 3), state)};
  for (int64_t t = 3; t < n; ++t) pieces.push_back(model->forward_stateful(tokens.narrow(1, t, 1), state));
  EXPECT_TENSORS_CLOSE(at::cat(pieces, 1), full, 1e-9);

  std::set<std::string> names;
  for (const auto& [name, tensor] : model->checkpoint_tensors()) names.insert(name);
  for (const char* expected : {"model.layers.0.cumulative_mean.proj.weight", "model.layers.0.input_layernorm.weight",
                               "model.layers.0.post_attention_layernorm.weight", "model.layers.0.mlp.up_proj.weight",
                               "model.layers.3.cumulative_mean.proj.weight", "model.layers.1.self_attn.q_proj.weight",
                               "model.layers.2.mlstm.q_proj.weight"})
    EXPECT_TRUE(names.count(expected)) << expected;
  EXPECT_TRUE(model->layer(0).is_recurrent());
  EXPECT_EQ(model->inference_window(), 4);  // from the S block only
}

// The summaries (`model describe`, the memory check before allocating) read the same entry and the
// mixer's own accounting.
TEST(MixerTable, a_registered_mixer_is_counted_by_the_summaries) {
  RegisteredKind toy(cumulative_mean_kind());
  const auto config = SwaxConfig::from_json(tiny_config("TT"), "toy.json");
  const auto summary = models::summarize_swax(config, 64);
  const auto& block = summary.kinds.at('T');
  EXPECT_EQ(block.count, 2);
  const int64_t mlp = 3 * 32 * 48, norms = 2 * 32;
  EXPECT_EQ(block.parameters_per_block, 32 * 32 + mlp + norms);
  EXPECT_EQ(block.state_bytes_per_block, 4 * (32 + 1));
  EXPECT_DOUBLE_EQ(block.flops_per_token, 2.0 * static_cast<double>(block.parameters_per_block) + 2.0 * 32);
  EXPECT_DOUBLE_EQ(models::swax_block_parameters(config, 'T'), 32.0 * 32 + mlp);
}

TEST(MixerTable, an_unknown_letter_is_rejected_naming_layer_pattern) {
  const std::string message =
      testing::error_of([] { SwaxConfig::from_json(Json{{"layer_pattern", "MSX"}}, "c.json"); });
  EXPECT_NE(message.find("c.json: field 'layer_pattern'"), std::string::npos) << message;
  EXPECT_NE(message.find("got 'X'"), std::string::npos) << message;
}

// The list of letters in that error is the table's, registered kinds included.
TEST(MixerTable, the_pattern_error_lists_every_registered_kind) {
  RegisteredKind toy(cumulative_mean_kind());
  EXPECT_EQ(models::describe_swax_mixer_kinds(),
            "S (sliding-window attention), A (full attention), M (mLSTM), G (Gated DeltaNet) and T (causal cumulative "
            "mean)");
}

TEST(MixerTable, a_letter_that_is_taken_cannot_be_registered_again) {
  SwaxMixerKind clash = cumulative_mean_kind();
  clash.letter = 'M';
  const std::string message = testing::error_of([&] { models::register_mixer_kind(clash); });
  EXPECT_NE(message.find("'M' is taken by mLSTM"), std::string::npos) << message;
}

}  // namespace swarmt::mixer_table_test
