// The memory-lookup analysis of ARMT (eval/armt_lookup.h): the trace replays the model's own forward and
// records one write per written segment; the statistics score a memory that writes and reads each fact by
// its key as a perfect lookup, and one whose reads ignore the key as chance.
#include "swarmt/eval/armt_lookup.h"

#include <gtest/gtest.h>

#include "bad_input.h"
#include "swarmt/models/registry.h"

namespace swarmt::eval {
namespace {

using swarmt::testing::bad_input_message;
using models::ArmtConfig;
using models::ArmtModel;

std::shared_ptr<ArmtModel> tiny_armt(const Json& memory) {
  torch::manual_seed(7);
  const Json base_config{{"model_type", "llama"}, {"hidden_size", 24},     {"num_hidden_layers", 3},
                         {"num_attention_heads", 4}, {"num_key_value_heads", 2}, {"head_dim", 6},
                         {"intermediate_size", 40}, {"vocab_size", 37},  {"rms_norm_eps", 1e-5},
                         {"tie_word_embeddings", true}, {"bos_token_id", 1}, {"eos_token_id", 2}};
  auto base = models::create_model(base_config, "config.json");
  base->to(at::kDouble);
  Json armt{{"segment_size", 6}, {"num_memory_tokens", 3}, {"d_mem", 4}, {"memory_layers", Json::array({0, 2})},
            {"num_heads", 2}, {"seed", 3}};
  armt.update(memory);
  auto model = std::make_shared<ArmtModel>(base, ArmtConfig::from_json(armt, "armt.json"));
  at::NoGradGuard no_grad;
  for (auto& [name, p] : model->adapter_tensors()) p.copy_(at::randn_like(p) * 0.3);  // W_v = 0 would leave A empty
  return model;
}

TEST(ArmtLookup, the_trace_replays_the_forward_and_records_one_write_per_written_segment) {
  for (const Json& memory : {Json::object(), Json{{"memory_tokens_read", false}},
                             Json{{"memory_tokens_read", false}, {"separate_write_pass", true}}}) {
    SCOPED_TRACE(memory.dump());
    auto model = tiny_armt(memory);
    torch::manual_seed(5);
    const at::Tensor tokens = at::randint(3, 37, {1, 21}, at::TensorOptions().dtype(at::kLong));  // 3.5 segments
    const ArmtTrace trace = trace_armt(*model, tokens);
    at::NoGradGuard no_grad;
    const at::Tensor expected = model->forward_hidden(tokens);
    ASSERT_EQ(trace.hidden.sizes(), expected.sizes());
    EXPECT_LT((trace.hidden - expected).abs().max().item<double>(), 1e-10);
    ASSERT_EQ(trace.layers.size(), 2u);
    EXPECT_EQ(trace.layers[0].layer, 0);
    EXPECT_EQ(trace.layers[1].layer, 2);
    for (const auto& layer : trace.layers) {
      const int64_t key_dim = 2 * 3 * 4 / 2;  // DPFP: 2·nu·d_mem, split over 2 heads
      EXPECT_EQ(layer.read_features.sizes(), (at::IntArrayRef{2, 21, key_dim}));
      ASSERT_EQ(layer.write_keys.size(), 3u);  // the last (partial) segment writes nothing
      for (size_t s = 0; s < 3; ++s) {
        EXPECT_EQ(layer.write_keys[s].sizes(), (at::IntArrayRef{2, 3, key_dim}));
        EXPECT_EQ(layer.write_betas[s].sizes(), (at::IntArrayRef{2, 3}));
        EXPECT_TRUE(((layer.write_betas[s] > 0) & (layer.write_betas[s] < 1)).all().item<bool>());
      }
    }
  }
}

// A hand-made trace over a probe of K facts, one per segment of T = 8 tokens: every written segment writes
// key `write_key(segment)` with strength 1, every position reads with `read_feature(position)`.
ArmtTrace hand_made_trace(const data::RecallProbe& probe, int64_t T,
                          const std::function<at::Tensor(int64_t)>& write_key,
                          const std::function<at::Tensor(int64_t)>& read_feature) {
  const int64_t n = probe.length(), written = (n - 1) / T;
  MemoryLayerTrace layer;
  layer.layer = 1;
  std::vector<at::Tensor> reads;
  for (int64_t t = 0; t < n; ++t) reads.push_back(read_feature(t).view({1, 1, -1}));
  layer.read_features = at::cat(reads, 1);
  for (int64_t s = 0; s < written; ++s) {
    layer.write_keys.push_back(write_key(s).view({1, 1, -1}));
    layer.write_betas.push_back(at::ones({1, 1}, at::kDouble));
  }
  ArmtTrace trace;
  trace.layers.push_back(layer);
  return trace;
}

data::RecallProbe four_facts(uint64_t seed) {
  const data::RecallVocabulary v{10, 18, 20, 28, 30, 37};
  return data::make_recall_probe(v, 4, 40, seed, /*gap=*/6);  // lead-in 8: fact j at 8 + 8j, segment 1 + j
}

TEST(ArmtLookup, a_memory_that_reads_each_fact_by_its_key_is_a_perfect_lookup) {
  LookupAccumulator lookup(8);
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    const auto probe = four_facts(seed);
    const auto onehot = [](int64_t index) { return at::one_hot(at::tensor(index), 8).to(at::kDouble); };
    std::map<int64_t, int64_t> key_of_segment, key_asked_at;
    for (int64_t j = 0; j < 4; ++j) {
      key_of_segment[(probe.pair_position(j) + 1) / 8] = probe.keys[static_cast<size_t>(j)] - 10;
      key_asked_at[probe.query_position(j)] = probe.keys[static_cast<size_t>(j)] - 10;
    }
    lookup.add(hand_made_trace(
                   probe, 8,
                   [&](int64_t s) { return key_of_segment.count(s) ? onehot(key_of_segment[s]) : at::zeros({8}, at::kDouble); },
                   [&](int64_t t) { return key_asked_at.count(t) ? onehot(key_asked_at[t]) : onehot(0); }),
               probe);
  }
  const auto stats = lookup.stats();
  ASSERT_EQ(stats.size(), 1u);
  EXPECT_EQ(stats[0].layer, 1);
  EXPECT_EQ(stats[0].questions, 12);
  EXPECT_EQ(stats[0].hits, 12);
  EXPECT_DOUBLE_EQ(stats[0].query_cosine, 0.0);  // different keys: orthogonal reads
  EXPECT_DOUBLE_EQ(stats[0].own_match, 1.0);
  EXPECT_DOUBLE_EQ(stats[0].other_match, 0.0);
  EXPECT_DOUBLE_EQ(stats[0].beta_fact, 1.0);
  EXPECT_NEAR(stats[0].key_cosine_same, 1.0, 1e-12);  // writes carry their fact's key
  EXPECT_NEAR(stats[0].key_cosine_different, 0.0, 1e-12);
}

TEST(ArmtLookup, reads_that_ignore_the_key_score_exactly_chance) {
  LookupAccumulator lookup(8);
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    const auto probe = four_facts(seed);
    // Each segment writes a distinct key, of growing overlap with the one vector every position reads:
    // every question then picks the same (latest) fact, its own for one question in four.
    lookup.add(hand_made_trace(
                   probe, 8, [](int64_t s) { return at::full({8}, 0.1 * static_cast<double>(s + 1), at::kDouble); },
                   [](int64_t) { return at::ones({8}, at::kDouble); }),
               probe);
  }
  const auto stats = lookup.stats();
  EXPECT_EQ(stats[0].hits, 3);  // 1 of 4 per probe
  EXPECT_EQ(stats[0].questions, 12);
  EXPECT_NEAR(stats[0].query_cosine, 1.0, 1e-12);
  EXPECT_NEAR(stats[0].key_cosine_same, 1.0, 1e-12);  // parallel keys: nothing tells the facts apart
  EXPECT_NEAR(stats[0].key_cosine_different, 1.0, 1e-12);
}

TEST(ArmtLookup, a_probe_of_one_fact_or_a_fact_in_the_unwritten_last_segment_is_refused) {
  LookupAccumulator lookup(8);
  const data::RecallVocabulary v{10, 18, 20, 28, 30, 37};
  const auto single = data::make_recall_probe(v, 1, 40, 1, 6);
  const auto flat = [](int64_t) { return at::ones({8}, at::kDouble); };
  EXPECT_NE(bad_input_message([&] { lookup.add(hand_made_trace(single, 8, flat, flat), single); })
                .find("needs at least two pairs"),
            std::string::npos);
  const auto probe = four_facts(1);
  LookupAccumulator long_segments(64);  // every fact in segment 0 of an input of one segment: nothing written
  ArmtTrace trace = hand_made_trace(probe, 8, flat, flat);
  trace.layers[0].write_keys.clear();
  trace.layers[0].write_betas.clear();
  EXPECT_NE(bad_input_message([&] { long_segments.add(trace, probe); }).find("writes nothing"), std::string::npos);
}

}  // namespace
}  // namespace swarmt::eval
