// The causal-LM training task's loss: where few positions are scored, the head runs on those alone,
// with the same loss and gradients as the head over every position.
#include "swarmt/train/lm_task.h"

#include <gtest/gtest.h>

#include "swarmt/data/batch.h"
#include "swarmt/models/registry.h"
#include "swarmt/train/loss.h"
#include "test_util.h"

namespace swarmt::train {
namespace {

TEST(CausalLMTask, scoring_a_few_positions_gives_the_loss_and_gradients_of_the_full_head) {
  // Gemma-3: its head has a final norm and a logit soft cap, both position by position.
  Json config{{"model_type", "gemma3_text"}, {"hidden_size", 24}, {"num_hidden_layers", 2},
              {"num_attention_heads", 4}, {"num_key_value_heads", 2}, {"head_dim", 6}, {"intermediate_size", 40},
              {"hidden_activation", "gelu_pytorch_tanh"}, {"query_pre_attn_scalar", 6}, {"sliding_window", 8},
              {"sliding_window_pattern", 2}, {"rope_theta", 1000000.0}, {"rope_local_base_freq", 10000.0},
              {"rms_norm_eps", 1e-6}, {"vocab_size", 259}, {"final_logit_softcapping", 30.0},
              {"bos_token_id", 1}, {"eos_token_id", 2}, {"pad_token_id", 0}};
  torch::manual_seed(5);
  std::shared_ptr<models::CausalLM> model = models::create_model(config, "model.json");
  CausalLMTask task(model, nullptr, nullptr, WindowSchedule{}, models::ModelAssets{});

  data::Batch batch;
  batch.tokens = at::randint(0, 256, {3, 40}, at::TensorOptions().dtype(at::kLong));
  for (int64_t scored : {5, 110}) {  // under half the 120 positions (the rows alone), over half (all)
    SCOPED_TRACE("scored positions: " + std::to_string(scored));
    batch.targets = at::full({3, 40}, data::kIgnoreIndex, at::TensorOptions().dtype(at::kLong));
    const at::Tensor flat = batch.targets.view({-1});
    const at::Tensor where = at::randperm(120, at::TensorOptions().dtype(at::kLong)).narrow(0, 0, scored);
    flat.index_put_({where}, at::randint(0, 256, {scored}, at::TensorOptions().dtype(at::kLong)));

    const auto params = model->parameters();
    const LossTerms terms = task.loss(batch, StepPlan{});
    const LossTerms full = cross_entropy_sum(model->forward(batch.tokens), batch.targets);
    EXPECT_EQ(terms.count, scored);
    EXPECT_EQ(full.count, scored);
    EXPECT_TRUE(TensorsClose(terms.sum, full.sum, 1e-5, 1e-6));
    const auto g = torch::autograd::grad({terms.sum}, params);
    const auto e = torch::autograd::grad({full.sum}, params);
    for (size_t i = 0; i < g.size(); ++i) EXPECT_TRUE(TensorsClose(g[i], e[i], 1e-6, 1e-5)) << "parameter " << i;
  }
}

}  // namespace
}  // namespace swarmt::train
