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

TEST(SkipRandomInit, a_model_built_under_it_does_not_draw_its_own_initialisation) {
  models::LlamaConfig config;
  config.vocab_size = 32;
  config.hidden_size = 16;
  config.intermediate_size = 24;
  config.num_hidden_layers = 1;
  config.num_attention_heads = 2;
  config.num_key_value_heads = 2;
  config.head_dim = 8;
  // Built normally, the 2-D weights are N(0, 0.02²) (HF's initializer_range): their spread is ~0.02.
  // Built under the guard, they keep torch's default Linear init, U(±1/sqrt(16)): spread ~0.14.
  at::Tensor drawn, skipped;
  {
    models::LlamaForCausalLM model(config);
    drawn = model.named_parameters()["model.layers.0.mlp.up_proj.weight"].clone();
  }
  {
    SkipRandomInit skip;
    models::LlamaForCausalLM model(config);
    skipped = model.named_parameters()["model.layers.0.mlp.up_proj.weight"].clone();
  }
  EXPECT_NEAR(drawn.std().item<double>(), 0.02, 0.005);
  EXPECT_GT(skipped.std().item<double>(), 0.1);
}

}  // namespace
}  // namespace swarmt::nn
