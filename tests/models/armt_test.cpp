// ARMT wrapper (specs/armt.md): equality with the base model at initialisation, the memory recurrence
// against a naive per-token reference, gradient flow across segments, checkpointed / truncated
// backpropagation, streaming == full forward, constant inference state, adapter and merged directories,
// and the rejection of malformed configs and adapters.
#include "swarmt/models/armt_model.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "bad_input.h"
#include "swarmt/core/atomic_file.h"
#include "swarmt/core/json.h"
#include "swarmt/models/armt_io.h"
#include "swarmt/models/model_io.h"
#include "swarmt/models/registry.h"
#include "test_util.h"

namespace swarmt::models {
namespace {

using swarmt::testing::bad_input_message;
using swarmt::testing::TempDir;

Json tiny_llama_json(int64_t layers = 3) {
  return Json{{"model_type", "llama"}, {"hidden_size", 24},     {"num_hidden_layers", layers},
              {"num_attention_heads", 4}, {"num_key_value_heads", 2}, {"head_dim", 6},
              {"intermediate_size", 40}, {"vocab_size", 37},  {"rms_norm_eps", 1e-5},
              {"tie_word_embeddings", true}, {"bos_token_id", 1}, {"eos_token_id", 2}};
}

Json tiny_swax_json() {
  return Json{{"model_type", "swax"},  {"vocab_size", 37},  {"hidden_size", 24}, {"layer_pattern", "MS"},
              {"num_attention_heads", 4}, {"num_key_value_heads", 2}, {"head_dim", 6}, {"sliding_window", 5},
              {"mlstm_num_heads", 2},  {"mlstm_qk_head_dim", 6}, {"mlstm_v_head_dim", 12}, {"mlstm_chunk_size", 4},
              {"intermediate_size", 40}, {"bos_token_id", 1}, {"eos_token_id", 2}, {"pad_token_id", 0}};
}

// A Gemma-3 text model: sliding-window layers (window 4, shorter than a segment) beside a global one,
// scaled embeddings, two RoPE bases.
Json tiny_gemma3_json() {
  return Json{{"model_type", "gemma3_text"}, {"hidden_size", 24}, {"num_hidden_layers", 3},
              {"num_attention_heads", 4}, {"num_key_value_heads", 2}, {"head_dim", 6}, {"intermediate_size", 40},
              {"hidden_activation", "gelu_pytorch_tanh"}, {"query_pre_attn_scalar", 6}, {"sliding_window", 4},
              {"sliding_window_pattern", 2}, {"rope_theta", 1000000.0}, {"rope_local_base_freq", 10000.0},
              {"rms_norm_eps", 1e-6}, {"vocab_size", 37}, {"bos_token_id", 1}, {"eos_token_id", 2},
              {"pad_token_id", 0}};
}

ArmtConfig small_armt(int64_t segment = 6, Json layers = "all") {
  return ArmtConfig::from_json(Json{{"segment_size", segment}, {"num_memory_tokens", 3}, {"d_mem", 4},
                                    {"memory_layers", layers}, {"seed", 3}},
                               "armt.json");
}

std::shared_ptr<CausalLM> make_base(const Json& config) {
  torch::manual_seed(7);
  auto base = create_model(config, "config.json");
  base->to(at::kDouble);
  at::NoGradGuard no_grad;
  for (auto& p : base->parameters()) p.add_(at::randn_like(p) * 0.1);  // less degenerate than the init
  return base;
}

// Gives every memory projection random weights (W_v starts at zero, which would make memory inert).
void activate_memory(ArmtModel& model) {
  at::NoGradGuard no_grad;
  torch::manual_seed(11);
  for (auto& [name, p] : model.adapter_tensors()) p.copy_(at::randn_like(p) * 0.3);
}

at::Tensor tokens_for(int64_t batch, int64_t n, int64_t vocab = 37, uint64_t seed = 5) {
  torch::manual_seed(seed);
  return at::randint(3, vocab, {batch, n}, at::TensorOptions().dtype(at::kLong));
}

void expect_close(const at::Tensor& a, const at::Tensor& b, double tol = 1e-9) {
  ASSERT_EQ(a.sizes(), b.sizes());
  const double diff = (a - b).abs().max().item<double>();
  EXPECT_LT(diff, tol) << "max difference " << diff;
}

TEST(ArmtModel, wrapped_model_equals_base_model_at_initialisation) {
  for (const Json& config : {tiny_llama_json(), tiny_swax_json(), tiny_gemma3_json()}) {
    auto base = make_base(config);
    ArmtModel armt(base, small_armt(6));
    armt.to(at::kDouble);
    auto tokens = tokens_for(2, 23);
    at::NoGradGuard no_grad;
    at::Tensor logits = armt.forward(tokens);
    // Memory starts empty and W_v = 0 keeps it at zero: each segment is the base model on that segment
    // alone, at segment-local positions.
    for (int64_t begin = 0; begin < 23; begin += 6) {
      const int64_t n = std::min<int64_t>(6, 23 - begin);
      expect_close(logits.narrow(1, begin, n), base->forward(tokens.narrow(1, begin, n)));
    }
  }
}

// The naive reference: per token reads and per memory-token writes as explicit loops over vectors.
struct NaiveMemory {
  at::Tensor A, z;  // (Dk, d), (Dk) for one batch row and one head
  bool empty = true;
};

at::Tensor naive_features(const at::Tensor& x, bool normalize) {  // x (d_mem) -> (6 d_mem)
  const int64_t d = x.size(0);
  at::Tensor r = at::zeros({2 * d}, x.options());
  for (int64_t i = 0; i < d; ++i) {
    r[i] = std::max(0.0, x[i].item<double>());
    r[d + i] = std::max(0.0, -x[i].item<double>());
  }
  at::Tensor phi = at::zeros({3 * 2 * d}, x.options());
  for (int64_t j = 1; j <= 3; ++j)
    for (int64_t i = 0; i < 2 * d; ++i)
      phi[(j - 1) * 2 * d + i] = r[i].item<double>() * r[((i - j) % (2 * d) + 2 * d) % (2 * d)].item<double>();
  if (normalize) phi = phi / std::max(phi.norm().item<double>(), 1e-12);
  return phi;
}

// memory_tokens_read false: the same, with the memory tokens left out of the read; read_gate: each read
// scaled by its position's σ(w·h + b); separate_write_pass: the segment read alone, and written from a
// second pass over the segment and the memory tokens in which nothing reads.
// linear_keys: signed unit keys φ(x) = x/||x|| and the plain delta rule (no z), memory token after memory token.
void expect_naive_per_token_reference(bool memory_tokens_read, bool read_gate = false,
                                      bool separate_write_pass = false, bool linear_keys = false) {
  SCOPED_TRACE(memory_tokens_read ? "memory tokens read" : "memory tokens do not read");
  SCOPED_TRACE(read_gate ? "gated read" : "ungated read");
  SCOPED_TRACE(separate_write_pass ? "separate write pass" : "one pass");
  SCOPED_TRACE(linear_keys ? "linear features, plain rule" : "DPFP features, normalised rule");
  auto base = make_base(tiny_llama_json(2));
  ArmtConfig config = small_armt(5, Json::array({1}));
  config.memory_tokens_read = memory_tokens_read;
  config.read_gate = read_gate;
  config.separate_write_pass = separate_write_pass;
  if (linear_keys) {
    config.feature_map = "linear";
    config.use_denom = false;
  }
  const auto features = [linear_keys](const at::Tensor& x) {
    return linear_keys ? x / std::max(x.norm().item<double>(), 1e-12) : naive_features(x, true);
  };
  ArmtModel armt(base, config);
  armt.to(at::kDouble);
  activate_memory(armt);
  const int64_t n = 17, seg = 5, mem = 3;
  auto tokens = tokens_for(1, n);
  at::NoGradGuard no_grad;
  auto result = armt.forward_segments(tokens, {}, /*write_last=*/true);

  auto& layer = armt.memory_layer(0);
  NaiveMemory memory;
  const int64_t dk = linear_keys ? 4 : 6 * 4, d = 24;
  memory.A = at::zeros({dk, d}, at::kDouble);
  memory.z = at::zeros({dk}, at::kDouble);
  std::vector<at::Tensor> hidden_parts;
  for (int64_t begin = 0; begin < n; begin += seg) {
    const int64_t len = std::min(seg, n - begin);
    const at::Tensor x = base->embed(tokens.narrow(1, begin, len));
    const at::Tensor with_memory_tokens = at::cat({x, armt.memory_tokens().unsqueeze(0)}, 1);
    at::Tensor h = separate_write_pass ? x : with_memory_tokens;
    nn::LayerContext ctx;
    ctx.positions = make_positions(h.size(1), 0);
    h = base->layer(0).forward(h, ctx);
    if (!memory.empty) {  // read, token by token
      at::Tensor read = at::zeros_like(h);
      for (int64_t t = 0; t < (memory_tokens_read ? h.size(1) : len); ++t) {
        at::Tensor q = features(layer->query->forward(h[0][t]));
        read[0][t] = at::matmul(memory.A.t(), q);
        if (!linear_keys) read[0][t] /= at::dot(memory.z, q).item<double>() + 1e-5;
        if (read_gate) read[0][t] *= at::sigmoid(layer->gate->forward(h[0][t]))[0].item<double>();
      }
      h = h + read;
    }
    h = base->layer(1).forward(h, ctx);
    at::Tensor written = h;  // the outputs the memory tokens write from
    if (separate_write_pass) {
      nn::LayerContext write_ctx;
      write_ctx.positions = make_positions(len + mem, 0);
      written = base->layer(1).forward(base->layer(0).forward(with_memory_tokens, write_ctx), write_ctx);
    }
    // write, memory token by memory token: the normalised rule all against the previous A and z, the
    // plain rule each against the A its predecessors left, A ← A + β k (v - Aᵀk)ᵀ
    at::Tensor dA = at::zeros_like(memory.A), dz = at::zeros_like(memory.z);
    for (int64_t i = 0; i < mem; ++i) {
      at::Tensor m = written[0][len + i];
      at::Tensor k = features(layer->key->forward(m));
      at::Tensor v = layer->value->forward(m);
      const double b = at::sigmoid(layer->beta->forward(m))[0].item<double>();
      if (linear_keys) {
        memory.A = memory.A + b * at::outer(k, v - at::matmul(memory.A.t(), k));
        continue;
      }
      at::Tensor vbar = at::zeros_like(v);
      double gamma = 1.0;
      if (!memory.empty) {
        const double den = at::dot(memory.z, k).item<double>() + 1e-5;
        vbar = at::matmul(memory.A.t(), k) / den;
        gamma = std::clamp(1.0 - den / at::dot(k, k).item<double>(), 0.0, 1.0);
      }
      dA += b * at::outer(k, v - vbar);
      dz += gamma * k;
    }
    memory.A = memory.A + dA;
    memory.z = memory.z + dz;
    memory.empty = false;
    hidden_parts.push_back(h.narrow(1, 0, len));
  }
  expect_close(result.memories[0].A[0][0], memory.A);
  expect_close(result.memories[0].z[0][0], memory.z);
  expect_close(result.hidden, at::cat(hidden_parts, 1));
}

TEST(ArmtModel, memory_after_several_segments_equals_a_naive_per_token_reference) {
  expect_naive_per_token_reference(/*memory_tokens_read=*/true);
}

TEST(ArmtModel, memory_tokens_that_do_not_read_equal_the_reference_without_their_read) {
  expect_naive_per_token_reference(/*memory_tokens_read=*/false);
}

TEST(ArmtModel, gated_reads_equal_the_reference_with_each_read_scaled_by_its_gate) {
  expect_naive_per_token_reference(/*memory_tokens_read=*/false, /*read_gate=*/true);
  expect_naive_per_token_reference(/*memory_tokens_read=*/true, /*read_gate=*/true);
}

TEST(ArmtModel, signed_keys_equal_the_reference_of_the_plain_delta_rule_with_unit_keys) {
  expect_naive_per_token_reference(/*memory_tokens_read=*/false, /*read_gate=*/false, /*separate_write_pass=*/false,
                                   /*linear_keys=*/true);
  expect_naive_per_token_reference(/*memory_tokens_read=*/true, /*read_gate=*/false, /*separate_write_pass=*/false,
                                   /*linear_keys=*/true);
}

TEST(ArmtModel, a_separate_write_pass_equals_the_reference_whose_writes_see_their_segment_alone) {
  expect_naive_per_token_reference(/*memory_tokens_read=*/false, /*read_gate=*/false, /*separate_write_pass=*/true);
  expect_naive_per_token_reference(/*memory_tokens_read=*/false, /*read_gate=*/true, /*separate_write_pass=*/true);
}

double last_segment_loss(ArmtModel& model, const at::Tensor& tokens, int64_t seg) {
  at::Tensor logits = model.forward(tokens);
  const int64_t n = tokens.size(1), begin = (n - 1) / seg * seg;
  at::Tensor last = logits.narrow(1, begin, n - begin - 1);
  at::Tensor targets = tokens.narrow(1, begin + 1, n - begin - 1);
  at::Tensor loss = at::cross_entropy_loss(last.reshape({-1, last.size(-1)}), targets.reshape({-1}));
  loss.backward();
  return loss.item<double>();
}

TEST(ArmtModel, gradients_reach_the_memory_parameters_across_segments) {
  auto base = make_base(tiny_llama_json());
  ArmtModel armt(base, small_armt(6));
  armt.to(at::kDouble);
  auto tokens = tokens_for(2, 16);  // segments [0,6) [6,12) [12,16): the loss sees only the last one
  last_segment_loss(armt, tokens, 6);
  // At initialisation A = 0, so only W_v (which makes A non-zero) has a gradient.
  for (auto& [name, p] : armt.adapter_tensors()) {
    if (name.find(".value.") != std::string::npos) {
      EXPECT_GT(p.grad().abs().sum().item<double>(), 0) << name;
    }
  }
  armt.zero_grad();
  activate_memory(armt);
  last_segment_loss(armt, tokens, 6);
  for (auto& [name, p] : armt.adapter_tensors()) {
    ASSERT_TRUE(p.grad().defined()) << name;
    EXPECT_GT(p.grad().abs().sum().item<double>(), 0) << name << " gets no gradient from a later segment";
  }
}

std::vector<at::Tensor> gradients(ArmtModel& model) {
  std::vector<at::Tensor> out;
  for (auto& p : model.parameters()) out.push_back(p.grad().defined() ? p.grad().clone() : at::zeros_like(p));
  return out;
}

TEST(ArmtModel, checkpointed_and_truncated_backprop_give_the_loss_of_the_plain_version) {
  auto tokens = tokens_for(2, 20);
  auto run = [&](bool checkpoint, int64_t bptt, bool separate_write_pass = false) {
    auto base = make_base(tiny_llama_json());
    ArmtConfig c = small_armt(6);
    c.checkpoint_segments = checkpoint;
    c.bptt_depth = bptt;
    c.memory_tokens_read = !separate_write_pass;
    c.separate_write_pass = separate_write_pass;
    auto armt = std::make_shared<ArmtModel>(base, c);
    armt->to(at::kDouble);
    activate_memory(*armt);
    const double loss = last_segment_loss(*armt, tokens, 6);
    return std::make_pair(loss, gradients(*armt));
  };
  auto [plain_loss, plain_grads] = run(false, 0);
  auto [ckpt_loss, ckpt_grads] = run(true, 0);
  auto [trunc_loss, trunc_grads] = run(false, 1);
  auto [both_loss, both_grads] = run(true, 2);
  EXPECT_NEAR(ckpt_loss, plain_loss, 1e-12);
  EXPECT_NEAR(trunc_loss, plain_loss, 1e-12);
  EXPECT_NEAR(both_loss, plain_loss, 1e-12);
  ASSERT_EQ(ckpt_grads.size(), plain_grads.size());
  for (size_t i = 0; i < plain_grads.size(); ++i) expect_close(ckpt_grads[i], plain_grads[i], 1e-10);
  auto [separate_loss, separate_grads] = run(false, 0, true);  // a recomputed segment makes both passes
  auto [separate_ckpt_loss, separate_ckpt_grads] = run(true, 0, true);
  EXPECT_NEAR(separate_ckpt_loss, separate_loss, 1e-12);
  for (size_t i = 0; i < separate_grads.size(); ++i) expect_close(separate_ckpt_grads[i], separate_grads[i], 1e-10);
  // Truncation cuts the gradient paths through older memory: some gradient must differ.
  double max_diff = 0;
  for (size_t i = 0; i < plain_grads.size(); ++i)
    max_diff = std::max(max_diff, (trunc_grads[i] - plain_grads[i]).abs().max().item<double>());
  EXPECT_GT(max_diff, 1e-8);
}

TEST(ArmtModel, streaming_in_any_chunks_equals_the_full_forward) {
  for (const Json& config : {tiny_llama_json(), tiny_swax_json(), tiny_gemma3_json()}) {
    // A commit runs the memory tokens alone; a separate write pass keeps a second segment state to write from.
    const std::vector<std::pair<bool, bool>> variants = {{true, false}, {false, false}, {false, true}};
    for (const auto& [memory_tokens_read, separate_write_pass] : variants) {
      SCOPED_TRACE(config["model_type"].get<std::string>() +
                   (memory_tokens_read ? "" : ", memory tokens do not read, gated reads") +
                   (separate_write_pass ? ", separate write pass" : ""));
      auto base = make_base(config);
      ArmtConfig armt_config = small_armt(6, "alternate");
      armt_config.memory_tokens_read = memory_tokens_read;
      armt_config.read_gate = !memory_tokens_read;
      armt_config.separate_write_pass = separate_write_pass;
      ArmtModel armt(base, armt_config);
      armt.to(at::kDouble);
      activate_memory(armt);
      auto tokens = tokens_for(1, 31);
      at::NoGradGuard no_grad;
      at::Tensor full = armt.forward(tokens);
      ModelState state = armt.new_state(1);
      std::vector<at::Tensor> parts;
      int64_t offset = 0;
      for (int64_t chunk : {1, 5, 6, 1, 11, 7}) {  // crosses and ends on segment boundaries
        parts.push_back(armt.forward_stateful(tokens.narrow(1, offset, chunk), state));
        offset += chunk;
      }
      ASSERT_EQ(offset, 31);
      expect_close(at::cat(parts, 1), full, 1e-8);
      EXPECT_EQ(state.position, 31);
    }
  }
}

TEST(ArmtModel, an_inference_window_set_on_the_wrapper_reaches_the_base_and_its_saved_config) {
  ArmtModel model(make_base(tiny_swax_json()), small_armt());
  model.set_inference_window(3);
  EXPECT_EQ(model.config_json()["base_config"]["sliding_window"], 3);
  EXPECT_EQ(model.layer(1).window(), 3);  // layer_pattern "MS": the S layer
}

TEST(ArmtModel, inference_state_does_not_grow_with_the_number_of_segments) {
  auto base = make_base(tiny_llama_json());
  ArmtModel armt(base, small_armt(8));
  armt.to(at::kDouble);
  activate_memory(armt);
  at::NoGradGuard no_grad;
  std::vector<int64_t> bytes;
  for (int64_t segments : {4, 16, 64}) {
    ModelState state = armt.new_state(1);
    auto tokens = tokens_for(1, segments * 8);
    for (int64_t offset = 0; offset < tokens.size(1); offset += 8) armt.forward_stateful(tokens.narrow(1, offset, 8), state);
    bytes.push_back(state.bytes());
  }
  EXPECT_GT(bytes[0], 0);
  EXPECT_EQ(bytes[0], bytes[1]);
  EXPECT_EQ(bytes[1], bytes[2]);
}

TEST(ArmtConfig, layer_presets_select_the_documented_layers) {
  auto layers = [](Json spec, int64_t n) { return small_armt(6, spec).resolve_memory_layers(n, "armt.json"); };
  EXPECT_EQ(layers("all", 4), (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(layers("alternate", 5), (std::vector<int64_t>{0, 2, 4}));
  EXPECT_EQ(layers("middle_upper:0.2", 26), (std::vector<int64_t>{17, 18, 19, 20, 21}));
  EXPECT_EQ(layers("middle_upper:0.2", 32), (std::vector<int64_t>{21, 22, 23, 24, 25, 26}));
  EXPECT_EQ(layers("middle_upper:0.01", 4), (std::vector<int64_t>{2}));
  EXPECT_EQ(layers(Json::array({5, 1}), 8), (std::vector<int64_t>{1, 5}));
}

TEST(ArmtConfig, malformed_configs_name_the_field) {
  auto error = [](const Json& j) { return bad_input_message([&] { ArmtConfig::from_json(j, "a.json"); }); };
  EXPECT_EQ(error(Json{{"memory_layers", "upper"}}),
            "a.json: field 'memory_layers': unknown preset \"upper\" (use \"all\", \"alternate\", "
            "\"middle_upper:<fraction>\" or a list of layer indices)");
  EXPECT_EQ(error(Json{{"memory_layers", "middle_upper:1.5"}}),
            "a.json: field 'memory_layers': \"middle_upper:1.5\": the fraction must be a number in (0, 1]");
  EXPECT_EQ(error(Json{{"memory_layers", Json::array({1, 1})}}), "a.json: field 'memory_layers' lists layer 1 twice");
  EXPECT_EQ(error(Json{{"d_mem", 6}, {"num_heads", 4}}), "a.json: field 'd_mem' (6) must be divisible by num_heads (4)");
  EXPECT_NE(error(Json{{"segment_size", 0}}).find("segment_size"), std::string::npos);
  EXPECT_NE(error(Json{{"num_memory_tokens", "8"}}).find("num_memory_tokens"), std::string::npos);
  EXPECT_NE(error(Json{{"memory_tokens", 8}}).find("memory_tokens"), std::string::npos);  // unknown key
  EXPECT_EQ(error(Json{{"separate_write_pass", true}}),
            "a.json: field 'memory_tokens_read' must be false with separate_write_pass (nothing reads in the write "
            "pass)");
  EXPECT_EQ(error(Json{{"feature_map", "softmax"}}),
            "a.json: field 'feature_map' must be \"dpfp\" or \"linear\", got \"softmax\"");
  EXPECT_EQ(error(Json{{"feature_map", "linear"}}),
            "a.json: field 'use_denom' must be false with feature_map \"linear\" (the normaliser zᵀφ(q) of signed "
            "features can vanish)");
  EXPECT_EQ(error(Json{{"feature_map", "linear"}, {"use_denom", false}, {"normalize_features", false}}),
            "a.json: field 'normalize_features' must be true with feature_map \"linear\" (the delta rule needs unit "
            "keys)");
  auto base = make_base(tiny_llama_json());
  EXPECT_EQ(bad_input_message([&] { ArmtModel(base, small_armt(6, Json::array({0, 3}))); }),
            "ARMT config: field 'memory_layers': layer 3 does not exist (the base model has 3 layers, 0..2)");
}

// Sets a field of a saved ARMT model's config to another value (segments of 6 tokens, 20 tokens in all):
// the first segment, read before any write, answers as before; the later ones differently.
void expect_changed_field_changes_only_later_segments(const std::string& dir, const std::string& config_file,
                                                      const std::string& field, const Json& value,
                                                      const at::Tensor& tokens, const at::Tensor& expected) {
  Json config = read_json_file(dir + "/" + config_file);
  ASSERT_NE(config[field], value) << field;
  config[field] = value;
  write_file_atomically(dir + "/" + config_file, config.dump());
  at::Tensor other = load_model(dir)->forward(tokens);
  expect_close(other.narrow(1, 0, 6), expected.narrow(1, 0, 6), 1e-5);
  EXPECT_GT((other.narrow(1, 6, 14) - expected.narrow(1, 6, 14)).abs().max().item<double>(), 1e-3) << field;
}

// The same for a boolean field, flipped.
void expect_flipped_flag_changes_only_later_segments(const std::string& dir, const std::string& config_file,
                                                     const std::string& field, const at::Tensor& tokens,
                                                     const at::Tensor& expected) {
  const Json config = read_json_file(dir + "/" + config_file);
  ASSERT_TRUE(config[field].is_boolean()) << field;
  expect_changed_field_changes_only_later_segments(dir, config_file, field, !config[field].get<bool>(), tokens,
                                                   expected);
}

// Saves ARMT over a tiny base with `config` and random memory weights as tmp/<name>; checks that the loaded
// model answers as the saved one and returns those logits for `tokens`.
at::Tensor save_armt_and_expect_it_reloads(TempDir& tmp, const ArmtConfig& config, const std::string& name,
                                           const at::Tensor& tokens) {
  auto base = make_base(tiny_llama_json());
  base->to(at::kFloat);
  save_model(*base, tmp.file("base"));
  auto armt = create_armt(tmp.file("base"), config);
  activate_memory(*armt);
  save_model(*armt, tmp.file(name));
  at::NoGradGuard no_grad;
  at::Tensor expected = armt->forward(tokens);
  expect_close(load_model(tmp.file(name))->forward(tokens), expected, 1e-5);
  return expected;
}

TEST(ArmtIo, adapter_and_merged_directories_load_the_same_model) {
  TempDir tmp;
  auto base = make_base(tiny_llama_json());
  base->to(at::kFloat);
  save_model(*base, tmp.file("base"));
  auto armt = create_armt(tmp.file("base"), small_armt(6));
  activate_memory(*armt);
  save_armt_adapter(*armt, tmp.file("adapter"), tmp.file("base"), {});
  save_model(*armt, tmp.file("merged"));
  auto tokens = tokens_for(1, 20);
  at::NoGradGuard no_grad;
  at::Tensor expected = armt->forward(tokens);
  for (const std::string dir : {"adapter", "merged"}) {
    auto loaded = load_model(tmp.file(dir));
    EXPECT_EQ(loaded->model_type(), "armt") << dir;
    expect_close(loaded->forward(tokens), expected, 1e-5);
  }
  // An absolute base path is kept as given (relative ones are stored relative to the adapter).
  EXPECT_EQ(read_json_file(tmp.file("adapter/armt_config.json"))["base_model"], tmp.file("base"));
}

TEST(ArmtIo, the_plain_delta_rule_is_kept_by_the_saved_model_and_changes_its_output) {
  TempDir tmp;
  ArmtConfig plain = small_armt(6);
  plain.use_denom = false;
  auto tokens = tokens_for(1, 20);
  at::Tensor expected = save_armt_and_expect_it_reloads(tmp, plain, "plain", tokens);
  // The same weights under the normalised rule answer differently from the second segment on.
  EXPECT_EQ(read_json_file(tmp.file("plain/config.json"))["use_denom"], false);
  at::NoGradGuard no_grad;
  expect_flipped_flag_changes_only_later_segments(tmp.file("plain"), "config.json", "use_denom", tokens, expected);
}

TEST(ArmtIo, signed_keys_are_kept_by_the_saved_model_and_change_its_output) {
  TempDir tmp;
  ArmtConfig linear = small_armt(6);
  linear.use_denom = false;
  linear.feature_map = "linear";
  auto tokens = tokens_for(1, 20);
  at::Tensor expected = save_armt_and_expect_it_reloads(tmp, linear, "linear", tokens);
  // The same weights with DPFP features answer differently from the second segment on.
  EXPECT_EQ(read_json_file(tmp.file("linear/config.json"))["feature_map"], "linear");
  at::NoGradGuard no_grad;
  expect_changed_field_changes_only_later_segments(tmp.file("linear"), "config.json", "feature_map", "dpfp", tokens,
                                                   expected);
}

TEST(ArmtIo, a_read_gate_is_saved_with_the_adapter_and_missing_gate_tensors_are_rejected) {
  TempDir tmp;
  auto base = make_base(tiny_llama_json());
  base->to(at::kFloat);
  save_model(*base, tmp.file("base"));
  ArmtConfig gated = small_armt(6, Json::array({1}));
  gated.read_gate = true;
  auto armt = create_armt(tmp.file("base"), gated);
  activate_memory(*armt);
  save_armt_adapter(*armt, tmp.file("gated"), tmp.file("base"), {});
  auto tokens = tokens_for(1, 20);
  at::NoGradGuard no_grad;
  at::Tensor expected = armt->forward(tokens);
  expect_close(load_model(tmp.file("gated"))->forward(tokens), expected, 1e-5);
  // The same adapter tensors without the gate read at full strength: a different model from segment 2 on.
  EXPECT_EQ(read_json_file(tmp.file("gated/armt_config.json"))["read_gate"], true);
  expect_flipped_flag_changes_only_later_segments(tmp.file("gated"), "armt_config.json", "read_gate", tokens,
                                                  expected);
  // An adapter saved without a gate cannot be loaded as a gated one.
  save_armt_adapter(*create_armt(tmp.file("base"), small_armt(6, Json::array({1}))), tmp.file("plain"),
                    tmp.file("base"), {});
  Json claims_gate = read_json_file(tmp.file("plain/armt_config.json"));
  claims_gate["read_gate"] = true;
  write_file_atomically(tmp.file("plain/armt_config.json"), claims_gate.dump());
  const std::string message = bad_input_message([&] { load_model(tmp.file("plain")); });
  EXPECT_NE(message.find("armt.layers.1.gate.weight' is missing"), std::string::npos) << message;
}

TEST(ArmtIo, broken_adapters_are_rejected_with_the_file_and_problem) {
  TempDir tmp;
  auto base = make_base(tiny_llama_json());
  base->to(at::kFloat);
  save_model(*base, tmp.file("base"));
  auto armt = create_armt(tmp.file("base"), small_armt(6));
  save_armt_adapter(*armt, tmp.file("adapter"), tmp.file("base"), {});
  const std::string config_path = tmp.file("adapter/armt_config.json");
  const Json good = read_json_file(config_path);
  auto with = [&](const std::function<void(Json&)>& edit) {
    Json j = good;
    edit(j);
    write_file_atomically(config_path, j.dump());
    return bad_input_message([&] { load_model(tmp.file("adapter")); });
  };
  EXPECT_NE(with([](Json& j) { j["base_model"] = "../missing"; }).find("field 'base_model': \"../missing\" is not a directory"),
            std::string::npos);
  EXPECT_NE(with([](Json& j) { j["base_hidden_size"] = 48; }).find("the adapter was made for hidden_size 48"),
            std::string::npos);
  EXPECT_NE(with([](Json& j) { j["model_type"] = "llama"; }).find("field 'model_type' must be \"armt\""),
            std::string::npos);
  EXPECT_NE(with([](Json& j) { j["d_mem"] = 8; }).find("tensor 'armt.layers.0.query.weight' has shape"), std::string::npos);
  write_file_atomically(config_path, good.dump());
  write_file_atomically(tmp.file("adapter/armt.safetensors"), "not a safetensors file");
  EXPECT_NE(bad_input_message([&] { load_model(tmp.file("adapter")); }).find("armt.safetensors"), std::string::npos);
}

}  // namespace
}  // namespace swarmt::models
