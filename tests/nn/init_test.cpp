// Initialisers and the guard that skips them while a model is built only to be loaded.
#include <gtest/gtest.h>

#include "swarmt/models/llama.h"
#include "swarmt/nn/init.h"
#include "test_util.h"

namespace swarmt::nn {
namespace {

TEST(SkipRandomInit, initialisers_leave_parameters_untouched_while_it_lives_and_draw_again_after) {
  auto w = at::zeros({8, 8});
  {
    SkipRandomInit skip;
    EXPECT_TRUE(random_init_skipped());
    {
      SkipRandomInit nested;  // nesting keeps the outer guard's setting when the inner one ends
    }
    EXPECT_TRUE(random_init_skipped());
    small_init_(w, 8);
    wang_init_(w, 8, 2);
    normal_init_(w, 0.02);
    EXPECT_TRUE(at::equal(w, at::zeros({8, 8})));
  }
  EXPECT_FALSE(random_init_skipped());
  normal_init_(w, 0.02);
  EXPECT_GT(w.abs().sum().item<double>(), 0.0);
}

// Built under the guard, a model draws no initialisation, torch's own Linear and Embedding ones included
// (seconds of a large model's load time), and leaves the random stream where it was: the next random
// number is the one drawn without building it. Its parameters have the names, shapes, dtypes and requires_grad of
// the ordinary construction, and its layers the same options. Built normally, the 2-D weights are
// N(0, 0.02²) (HF's initializer_range).
TEST(SkipRandomInit, a_model_built_under_it_draws_nothing_and_has_every_parameter_shape) {
  models::LlamaConfig config;
  config.vocab_size = 32;
  config.hidden_size = 16;
  config.intermediate_size = 24;
  config.num_hidden_layers = 1;
  config.num_attention_heads = 2;
  config.num_key_value_heads = 2;
  config.head_dim = 8;
  config.tie_word_embeddings = false;
  models::LlamaForCausalLM drawn(config);
  EXPECT_NEAR(drawn.named_parameters()["model.layers.0.mlp.up_proj.weight"].std().item<double>(), 0.02, 0.005);

  torch::manual_seed(5);
  const double next = at::rand({1}).item<double>();
  torch::manual_seed(5);
  SkipRandomInit skip;
  models::LlamaForCausalLM skipped(config);
  EXPECT_EQ(at::rand({1}).item<double>(), next);
  const auto expected = drawn.named_parameters(), got = skipped.named_parameters();
  ASSERT_EQ(got.size(), expected.size());
  for (const auto& item : expected) {
    SCOPED_TRACE(item.key());
    const at::Tensor* p = got.find(item.key());
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(p->sizes(), item.value().sizes());
    EXPECT_EQ(p->scalar_type(), item.value().scalar_type());
    EXPECT_EQ(p->requires_grad(), item.value().requires_grad());
  }
  const auto& mlp = skipped.named_modules("", /*include_self=*/false)["model.layers.0.mlp.up_proj"]->as<torch::nn::Linear>();
  ASSERT_NE(mlp, nullptr);
  EXPECT_EQ(mlp->options.in_features(), 16);
  EXPECT_EQ(mlp->options.out_features(), 24);
}

}  // namespace
}  // namespace swarmt::nn
