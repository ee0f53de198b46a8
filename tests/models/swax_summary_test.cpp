#include "swarmt/models/swax_summary.h"

#include <gtest/gtest.h>

#include <fstream>

#include "swarmt/models/swax_model.h"
#include "test_util.h"

namespace swarmt::models {
namespace {

SwaxConfig config_with(const std::string& pattern, bool tied) {
  Json j{{"vocab_size", 50},         {"hidden_size", 32},        {"layer_pattern", pattern},
         {"num_attention_heads", 4}, {"num_key_value_heads", 2}, {"head_dim", 8},
         {"sliding_window", 16},     {"mlstm_num_heads", 2},     {"gdn_num_heads", 2},
         {"gdn_head_dim", 8},        {"gdn_v_head_dim", 16},     {"intermediate_size", 48},
         {"tie_word_embeddings", tied}};
  return SwaxConfig::from_json(j, "test.json");
}

TEST(SwaxSummary, parameter_count_equals_the_built_model) {
  for (bool tied : {false, true}) {
    for (const std::string pattern : {"MSMS", "GSA", "SSSS", "M"}) {
      const auto config = config_with(pattern, tied);
      SwaxForCausalLM model(config);
      EXPECT_EQ(summarize_swax(config, 128).total_parameters, model.num_parameters())
          << pattern << (tied ? " tied" : " untied");
    }
  }
}

TEST(SwaxSummary, sliding_window_state_stops_growing_at_the_window_and_full_attention_does_not) {
  const auto config = config_with("SA", false);
  const auto at_window = summarize_swax(config, 16), far = summarize_swax(config, 4096);
  EXPECT_EQ(at_window.kinds.at('S').state_bytes_per_block, far.kinds.at('S').state_bytes_per_block);
  EXPECT_EQ(far.kinds.at('A').state_bytes_per_block, 256 * at_window.kinds.at('A').state_bytes_per_block);
  // Per-token FLOPs of sliding-window attention approach a constant; full attention's keep growing.
  const double s_ratio = summarize_swax(config, 8192).kinds.at('S').flops_per_token / far.kinds.at('S').flops_per_token;
  const double a_ratio = summarize_swax(config, 8192).kinds.at('A').flops_per_token / far.kinds.at('A').flops_per_token;
  EXPECT_NEAR(s_ratio, 1.0, 0.01);
  EXPECT_GT(a_ratio, 1.2);
}

TEST(SwaxSummary, recurrent_state_is_independent_of_the_context) {
  const auto config = config_with("MG", false);
  const auto a = summarize_swax(config, 64), b = summarize_swax(config, 1 << 20);
  EXPECT_EQ(a.state_bytes, b.state_bytes);
  EXPECT_GT(a.state_bytes, 0);
}

// The paper layouts shipped in configs/ are describable without materialising the model.
TEST(SwaxSummary, paper_layouts_have_their_nominal_sizes) {
  for (const auto& [file, low, high] : std::vector<std::tuple<std::string, double, double>>{
           {"swax-1.4b.json", 1.2e9, 1.7e9}, {"swax-7b.json", 6.0e9, 8.0e9}}) {
    const std::string path = std::string(SWARMT_TEST_DATA_DIR) + "/../../configs/" + file;
    const auto config = SwaxConfig::from_json(read_json_file(path), path);
    const double n = static_cast<double>(summarize_swax(config, 4096).total_parameters);
    EXPECT_GT(n, low) << file;
    EXPECT_LT(n, high) << file;
  }
}

}  // namespace
}  // namespace swarmt::models
