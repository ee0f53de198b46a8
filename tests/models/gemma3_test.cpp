// Gemma3ForCausalLM text models from Hugging Face checkpoints (specs/hf-formats.md §2.3-2.4): tiny random
// checkpoints in both config schemas, with sliding-window layers of window 4, are loaded with load_model
// and compared with a plain fp64 reference of the forward pass; cached decoding past the window, saving
// and the rejection of broken checkpoints are checked as well.
#include "swarmt/models/gemma3.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "models/decode_paths.h"
#include "models/hf_checkpoint.h"
#include "swarmt/infer/token_stream.h"
#include "swarmt/models/model_io.h"

namespace swarmt::models {
namespace {

using namespace swarmt::testing::hf;
using swarmt::testing::TempDir;

// A tiny Gemma 3. query_pre_attn_scalar differs from head_dim so that the attention scale is checked; the
// two RoPE bases differ enough to tell local from global layers apart.
struct TinyGemma {
  std::string name = "legacy_schema";
  int64_t vocab = 61, hidden = 32, heads = 4, kv_heads = 2, head_dim = 16, ffn = 48, window = 4;
  double eps = 1e-6, query_pre_attn_scalar = 24.0, local_theta = 10000.0, global_theta = 1000000.0;
  std::vector<bool> sliding{true, true, false, true, true};  // pattern 3 over 5 layers
  double global_linear_factor = 0.0;                      // rope_scaling "linear" on full layers (0: none)
  double attn_softcap = 0.0, final_softcap = 0.0;         // 0: null
  bool tied = true;                                       // tie_word_embeddings absent means tied
  bool new_schema = false;                                // layer_types + rope_parameters (transformers >= 4.53)
  int64_t layers() const { return static_cast<int64_t>(sliding.size()); }
};

void PrintTo(const TinyGemma& c, std::ostream* os) { *os << c.name; }

Json null_or(double value) { return value > 0 ? Json(value) : Json(nullptr); }

Json gemma_config(const TinyGemma& c, const std::string& dtype = "float32") {
  Json j{{"architectures", {"Gemma3ForCausalLM"}},
         {"model_type", "gemma3_text"},
         {"hidden_size", c.hidden},
         {"num_hidden_layers", c.layers()},
         {"num_attention_heads", c.heads},
         {"num_key_value_heads", c.kv_heads},
         {"head_dim", c.head_dim},
         {"intermediate_size", c.ffn},
         {"hidden_activation", "gelu_pytorch_tanh"},
         {"query_pre_attn_scalar", c.query_pre_attn_scalar},
         {"sliding_window", c.window},
         {"attn_logit_softcapping", null_or(c.attn_softcap)},
         {"final_logit_softcapping", null_or(c.final_softcap)},
         {"max_position_embeddings", 32768},
         {"rms_norm_eps", c.eps},
         {"vocab_size", c.vocab},
         {"attention_bias", false},
         {"attention_dropout", 0.0},
         {"cache_implementation", "hybrid"},
         {"bos_token_id", 2},
         {"eos_token_id", {1, 60}},
         {"pad_token_id", 0}};
  if (!c.tied) j["tie_word_embeddings"] = false;
  Json scaling = c.global_linear_factor > 0 ? Json{{"rope_type", "linear"}, {"factor", c.global_linear_factor}}
                                            : Json(nullptr);
  if (!c.new_schema) {
    // transformers <= 4.52: a repeating pattern and three RoPE fields. The tests' patterns are periodic.
    int64_t pattern = 1;
    while (pattern <= c.layers() && c.sliding[pattern - 1]) ++pattern;
    j["sliding_window_pattern"] = pattern;
    j["rope_theta"] = c.global_theta;
    j["rope_local_base_freq"] = c.local_theta;
    j["rope_scaling"] = scaling;
    j["torch_dtype"] = dtype;
    j["transformers_version"] = "4.50.0.dev0";
  } else {
    // transformers >= 4.53: explicit layer types and one RoPE entry per layer type.
    Json types = Json::array();
    for (bool s : c.sliding) types.push_back(s ? "sliding_attention" : "full_attention");
    j["layer_types"] = types;
    j["_sliding_window_pattern"] = 6;  // stale value: layer_types decides
    j["use_bidirectional_attention"] = false;
    Json full{{"rope_theta", c.global_theta}, {"rope_type", "default"}};
    if (c.global_linear_factor > 0) full = Json{{"rope_theta", c.global_theta}, {"rope_type", "linear"}, {"factor", c.global_linear_factor}};
    j["rope_parameters"] = Json{{"full_attention", full},
                                {"sliding_attention", {{"rope_theta", c.local_theta}, {"rope_type", "default"}}}};
    j["dtype"] = dtype;
    j["transformers_version"] = "4.57.1";
  }
  return j;
}

// Every tensor of the architecture with its HF name and shape. Norm weights are stored as w (used as
// 1 + w), so they are drawn around 0.
Weights gemma_weights(const TinyGemma& c) {
  const int64_t q_dim = c.heads * c.head_dim, kv_dim = c.kv_heads * c.head_dim;
  Weights w;
  w["model.embed_tokens.weight"] = random_weight({c.vocab, c.hidden}, 0.3);
  for (int64_t l = 0; l < c.layers(); ++l) {
    w[layer_name(l, "input_layernorm.weight")] = random_weight({c.hidden}, 0.1);
    w[layer_name(l, "self_attn.q_proj.weight")] = random_weight({q_dim, c.hidden}, 0.25);
    w[layer_name(l, "self_attn.k_proj.weight")] = random_weight({kv_dim, c.hidden}, 0.25);
    w[layer_name(l, "self_attn.v_proj.weight")] = random_weight({kv_dim, c.hidden}, 0.25);
    w[layer_name(l, "self_attn.o_proj.weight")] = random_weight({c.hidden, q_dim}, 0.25);
    w[layer_name(l, "self_attn.q_norm.weight")] = random_weight({c.head_dim}, 0.1);
    w[layer_name(l, "self_attn.k_norm.weight")] = random_weight({c.head_dim}, 0.1);
    w[layer_name(l, "post_attention_layernorm.weight")] = random_weight({c.hidden}, 0.1);
    w[layer_name(l, "pre_feedforward_layernorm.weight")] = random_weight({c.hidden}, 0.1);
    w[layer_name(l, "post_feedforward_layernorm.weight")] = random_weight({c.hidden}, 0.1);
    w[layer_name(l, "mlp.gate_proj.weight")] = random_weight({c.ffn, c.hidden}, 0.25);
    w[layer_name(l, "mlp.up_proj.weight")] = random_weight({c.ffn, c.hidden}, 0.25);
    w[layer_name(l, "mlp.down_proj.weight")] = random_weight({c.hidden, c.ffn}, 0.25);
  }
  w["model.norm.weight"] = random_weight({c.hidden}, 0.1);
  if (!c.tied) w["lm_head.weight"] = random_weight({c.vocab, c.hidden}, 0.25);
  return w;
}

// HF multiplies the embedding by sqrt(hidden_size) held as an fp32 tensor cast to the weights' dtype.
double embed_scale(const TinyGemma& c, at::ScalarType stored) {
  const float scale = static_cast<float>(std::sqrt(static_cast<double>(c.hidden)));
  return stored == at::kBFloat16 ? round_to_bf16(scale) : scale;
}

// The HF Gemma 3 forward pass of one sequence, fp64: ids (N) -> logits (N, V). Every norm is
// RMSNorm(x) · (1 + w); sandwich norms around attention and MLP; q/k norms per head before RoPE; local
// layers use the local base and the window, global ones the global base (and rope_scaling).
at::Tensor gemma_reference(const Weights& w, const TinyGemma& c, const at::Tensor& ids, double scale) {
  auto norm = [&](const at::Tensor& x, const std::string& name) {
    return rms_normalize(x, c.eps) * (1.0 + weight(w, name));
  };
  auto x = weight(w, "model.embed_tokens.weight").index_select(0, ids) * scale;  // (N, d)
  for (int64_t l = 0; l < c.layers(); ++l) {
    auto p = [&](const std::string& rest) { return layer_name(l, rest); };
    const bool sliding = c.sliding[l];
    auto inv_freq = rope_frequencies(c.head_dim, sliding ? c.local_theta : c.global_theta);
    if (!sliding && c.global_linear_factor > 0)
      for (double& f : inv_freq) f /= c.global_linear_factor;
    auto prepare = [&](const at::Tensor& head, bool is_query) {
      return rope_rotate(norm(head, p(is_query ? "self_attn.q_norm.weight" : "self_attn.k_norm.weight")), inv_freq);
    };
    auto h = norm(x, p("input_layernorm.weight"));
    auto q = apply_linear(h, weight(w, p("self_attn.q_proj.weight")));
    auto k = apply_linear(h, weight(w, p("self_attn.k_proj.weight")));
    auto v = apply_linear(h, weight(w, p("self_attn.v_proj.weight")));
    auto attn = grouped_attention(q, k, v, c.heads, c.kv_heads, c.head_dim, prepare,
                                  1.0 / std::sqrt(c.query_pre_attn_scalar), sliding ? c.window : 0, c.attn_softcap);
    x = x + norm(apply_linear(attn, weight(w, p("self_attn.o_proj.weight"))), p("post_attention_layernorm.weight"));
    h = norm(x, p("pre_feedforward_layernorm.weight"));
    auto mlp = apply_linear(gelu_tanh(apply_linear(h, weight(w, p("mlp.gate_proj.weight")))) *
                          apply_linear(h, weight(w, p("mlp.up_proj.weight"))),
                      weight(w, p("mlp.down_proj.weight")));
    x = x + norm(mlp, p("post_feedforward_layernorm.weight"));
  }
  auto logits = apply_linear(norm(x, "model.norm.weight"),
                       c.tied ? weight(w, "model.embed_tokens.weight") : weight(w, "lm_head.weight"));
  if (c.final_softcap > 0) logits = c.final_softcap * at::tanh(logits / c.final_softcap);
  return logits;
}

std::vector<TinyGemma> gemma_variants() {
  std::vector<TinyGemma> v;
  v.push_back(TinyGemma{});
  TinyGemma fresh;
  fresh.name = "new_schema_explicit_layer_types";
  fresh.new_schema = true;
  fresh.sliding = {false, true, true, false, true};  // not a repeating pattern
  v.push_back(fresh);
  TinyGemma scaled_legacy;
  scaled_legacy.name = "legacy_schema_global_linear_rope_scaling";
  scaled_legacy.global_linear_factor = 8.0;
  v.push_back(scaled_legacy);
  TinyGemma scaled_new = fresh;
  scaled_new.name = "new_schema_global_linear_rope_scaling";
  scaled_new.global_linear_factor = 8.0;
  v.push_back(scaled_new);
  TinyGemma untied;
  untied.name = "untied_with_soft_caps";
  untied.tied = false;
  untied.attn_softcap = 1.5;  // small caps, so that they change the result
  untied.final_softcap = 2.0;
  v.push_back(untied);
  TinyGemma multi_query;
  multi_query.name = "one_kv_head_as_gemma3_1b";
  multi_query.kv_heads = 1;
  multi_query.sliding = {true, true, true, true, true, false, true};  // pattern 6
  v.push_back(multi_query);
  return v;
}

class Gemma3Checkpoint : public ::testing::TestWithParam<TinyGemma> {};

TEST_P(Gemma3Checkpoint, forward_equals_reference_forward) {
  const TinyGemma c = GetParam();
  torch::manual_seed(21);
  TempDir dir;
  const auto weights = gemma_weights(c);
  write_hf_checkpoint(dir.path(), gemma_config(c), weights);
  auto model = load_model(dir.path(), in_float64());
  EXPECT_EQ(model->model_type(), "gemma3_text");

  const int64_t n = 19;  // several windows long
  auto tokens = random_tokens(2, n, c.vocab);
  at::NoGradGuard no_grad;
  auto logits = model->forward(tokens);
  ASSERT_EQ(logits.sizes().vec(), (std::vector<int64_t>{2, n, c.vocab}));
  const auto reference_weights = as_float64(weights, at::kFloat);
  for (int64_t b = 0; b < 2; ++b)
    EXPECT_TENSORS_CLOSE(logits[b], gemma_reference(reference_weights, c, tokens[b], embed_scale(c, at::kFloat)), 1e-10)
        << "sequence " << b;
}

INSTANTIATE_TEST_SUITE_P(Variants, Gemma3Checkpoint, ::testing::ValuesIn(gemma_variants()),
                         [](const ::testing::TestParamInfo<TinyGemma>& info) { return info.param.name; });

// Both schemas describe the same model: the same weights give the same logits.
TEST(Gemma3Config, both_schemas_give_the_same_model) {
  TinyGemma legacy;
  legacy.sliding = {true, true, false, true, true, false};
  legacy.global_linear_factor = 4.0;
  TinyGemma fresh = legacy;
  fresh.new_schema = true;
  torch::manual_seed(22);
  const auto weights = gemma_weights(legacy);
  TempDir a, b;
  write_hf_checkpoint(a.path(), gemma_config(legacy), weights);
  write_hf_checkpoint(b.path(), gemma_config(fresh), weights);
  auto tokens = random_tokens(1, 14, legacy.vocab);
  at::NoGradGuard no_grad;
  EXPECT_TRUE(at::equal(load_model(a.path())->forward(tokens), load_model(b.path())->forward(tokens)));
}

// The state API (chunks shorter and longer than the window, then single tokens) gives the logits of the
// full forward long after the sliding layers' rings have wrapped, for two sequences at once.
TEST(Gemma3Decoding, cached_decoding_equals_full_forward_past_the_window) {
  TinyGemma c;
  c.tied = false;
  torch::manual_seed(23);
  TempDir dir;
  write_hf_checkpoint(dir.path(), gemma_config(c), gemma_weights(c));
  auto model = load_model(dir.path(), in_float64());
  at::NoGradGuard no_grad;
  const int64_t n = 31;
  auto tokens = random_tokens(2, n, c.vocab);
  auto full = model->forward(tokens);

  auto state = model->new_state(2);
  std::vector<at::Tensor> pieces;
  int64_t fed = 0;
  for (int64_t chunk : {7, 1, 3, 9, 2}) {
    pieces.push_back(model->forward_stateful(tokens.narrow(1, fed, chunk), state));
    fed += chunk;
  }
  for (; fed < n; ++fed) pieces.push_back(model->forward_stateful(tokens.narrow(1, fed, 1), state));
  EXPECT_EQ(state.position, n);
  EXPECT_TENSORS_CLOSE(at::cat(pieces, 1), full, 1e-10);
}

// Gemma-3's blocks (sandwich norms, q/k norms, GeGLU, rings of 4 slots on the sliding layers and a growing
// cache on the global one) decode on raw buffers with the logits of their tensor ops, bit for bit, long
// after the rings have wrapped.
TEST(Gemma3Decoding, decoding_on_raw_buffers_equals_the_tensor_ops_bit_for_bit) {
  TinyGemma c;
  torch::manual_seed(24);
  TempDir dir;
  write_hf_checkpoint(dir.path(), gemma_config(c), gemma_weights(c));
  const int64_t n = 17;
  const auto tokens = random_tokens(1, n, c.vocab);
  for (auto dtype : {at::kFloat, at::kBFloat16}) {
    SCOPED_TRACE(dtype == at::kFloat ? "fp32" : "bf16");
    models::LoadOptions options;
    options.dtype = dtype;
    auto model = load_model(dir.path(), options);
    const nn::RawDecodeSteps steps = testing::expect_raw_decode_equals_tensor_decode(*model, tokens);
    EXPECT_EQ(steps.blocks, n * c.layers());
    EXPECT_EQ(steps.mixers, n * c.layers());
  }
}

// Generation's token stream (prompt prefilled in chunks of 5, longer than the window) returns the logits
// of the full forward at the last token fed.
TEST(Gemma3Decoding, token_stream_equals_full_forward) {
  TinyGemma c;
  c.new_schema = true;
  torch::manual_seed(24);
  TempDir dir;
  write_hf_checkpoint(dir.path(), gemma_config(c), gemma_weights(c));
  auto model = load_model(dir.path(), in_float64());
  const int64_t n = 24, prompt = 13;
  auto tokens = random_tokens(1, n, c.vocab);
  at::Tensor full;
  {
    at::NoGradGuard no_grad;
    full = model->forward(tokens)[0];
  }
  infer::CausalLMStream stream(model, /*prefill_chunk=*/5);
  EXPECT_TENSORS_CLOSE(stream.feed(tokens[0].narrow(0, 0, prompt)), full[prompt - 1], 1e-10);
  for (int64_t t = prompt; t < n; ++t) EXPECT_TENSORS_CLOSE(stream.feed(tokens[0].narrow(0, t, 1)), full[t], 1e-10);
}

// An inference window override (generate --window) changes the window of the sliding layers only, in
// the full forward and in cached decoding alike.
TEST(Gemma3Decoding, inference_window_override_applies_to_sliding_layers) {
  TinyGemma c;
  torch::manual_seed(31);
  TempDir dir;
  const auto weights = gemma_weights(c);
  write_hf_checkpoint(dir.path(), gemma_config(c), weights);
  auto model = load_model(dir.path(), in_float64());
  model->set_inference_window(6);
  EXPECT_EQ(model->inference_window(), 6);
  TinyGemma widened = c;
  widened.window = 6;
  const int64_t n = 17;
  auto tokens = random_tokens(1, n, c.vocab);
  at::NoGradGuard no_grad;
  auto full = model->forward(tokens);
  auto expected = gemma_reference(as_float64(weights, at::kFloat), widened, tokens[0], embed_scale(c, at::kFloat));
  EXPECT_TENSORS_CLOSE(full[0], expected, 1e-10);

  auto state = model->new_state(1);
  std::vector<at::Tensor> pieces{model->forward_stateful(tokens.narrow(1, 0, 8), state)};
  for (int64_t t = 8; t < n; ++t) pieces.push_back(model->forward_stateful(tokens.narrow(1, t, 1), state));
  EXPECT_TENSORS_CLOSE(at::cat(pieces, 1), full, 1e-10);
}

// Sliding layers keep a ring of `window` keys: their state stops growing once the window is full, while
// full-attention layers keep every position.
TEST(Gemma3Decoding, sliding_layer_state_is_bounded_by_the_window) {
  TinyGemma c;
  torch::manual_seed(25);
  TempDir dir;
  write_hf_checkpoint(dir.path(), gemma_config(c), gemma_weights(c));
  auto model = load_model(dir.path());
  at::NoGradGuard no_grad;
  auto state = model->new_state(1);
  auto tokens = random_tokens(1, 40, c.vocab);
  model->forward_stateful(tokens.narrow(1, 0, 10), state);
  std::vector<int64_t> after_10;
  for (const auto& layer : state.layers) after_10.push_back(layer->bytes());
  for (int64_t t = 10; t < 40; ++t) model->forward_stateful(tokens.narrow(1, t, 1), state);
  for (int64_t l = 0; l < c.layers(); ++l) {
    if (c.sliding[l]) EXPECT_EQ(state.layers[l]->bytes(), after_10[l]) << "layer " << l;
    else EXPECT_GT(state.layers[l]->bytes(), after_10[l]) << "layer " << l;
  }
}

// The embedding scale sqrt(32) = 5.65685 is applied as HF applies it: rounded to the weights' dtype
// (5.65625 in bf16), not in fp32.
TEST(Gemma3Embedding, embedding_scale_is_rounded_to_the_weight_dtype) {
  TinyGemma c;
  torch::manual_seed(26);
  TempDir dir;
  const auto weights = gemma_weights(c);
  write_hf_checkpoint(dir.path(), gemma_config(c, "bfloat16"), weights, at::kBFloat16);
  auto model = load_model(dir.path());
  ASSERT_EQ(model->dtype(), at::kBFloat16);
  const double bf16_scale = embed_scale(c, at::kBFloat16);
  ASSERT_NE(bf16_scale, embed_scale(c, at::kFloat));  // the rounding is visible at this size

  auto ids = random_tokens(1, 12, c.vocab);
  at::NoGradGuard no_grad;
  auto rows = weights.at("model.embed_tokens.weight").to(at::kBFloat16).index_select(0, ids[0]);
  // A product of two bf16 values is exact in fp32; the result is rounded once to bf16.
  auto expected = (rows.to(at::kFloat) * bf16_scale).to(at::kBFloat16);
  auto embedded = model->embed(ids)[0];
  EXPECT_EQ(embedded.scalar_type(), at::kBFloat16);
  EXPECT_TRUE(at::equal(embedded, expected));
}

// bf16 checkpoints stay bf16 by default and run close to the fp64 reference of the same weights; asked
// for fp64 they match it tightly (with the bf16-rounded embedding scale of the stored dtype).
TEST(Gemma3CheckpointDtype, bf16_checkpoint_loads_as_bf16_and_as_requested) {
  TinyGemma c;
  c.new_schema = true;
  torch::manual_seed(27);
  TempDir dir;
  const auto weights = gemma_weights(c);
  write_hf_checkpoint(dir.path(), gemma_config(c, "bfloat16"), weights, at::kBFloat16);
  auto tokens = random_tokens(1, 15, c.vocab);
  at::NoGradGuard no_grad;

  auto native = load_model(dir.path());
  EXPECT_EQ(native->dtype(), at::kBFloat16);
  auto expected_bf16 = gemma_reference(as_float64(weights, at::kBFloat16), c, tokens[0], embed_scale(c, at::kBFloat16));
  const double scale = expected_bf16.abs().max().item<double>();
  EXPECT_TENSORS_CLOSE(native->forward(tokens)[0].to(at::kDouble), expected_bf16, 0.05 * scale);

  // In fp64 the scale is that of fp64 weights (sqrt(d) as an fp32 tensor), as HF does after .double().
  auto exact = load_model(dir.path(), in_float64());
  auto expected_f64 = gemma_reference(as_float64(weights, at::kBFloat16), c, tokens[0], embed_scale(c, at::kFloat));
  EXPECT_TENSORS_CLOSE(exact->forward(tokens)[0], expected_f64, 1e-10);
}

// save_model writes config.json and every tensor under HF's names, with the norm weights unfolded back to
// w: a bf16 checkpoint (the published format) comes back bit for bit, in both schemas.
TEST(Gemma3Save, bf16_save_round_trips_names_config_and_values) {
  for (bool new_schema : {false, true}) {
    SCOPED_TRACE(new_schema ? "new schema" : "legacy schema");
    TinyGemma c;
    c.new_schema = new_schema;
    torch::manual_seed(28);
    TempDir original, saved;
    const auto weights = gemma_weights(c);
    const Json config = gemma_config(c, "bfloat16");
    write_hf_checkpoint(original.path(), config, weights, at::kBFloat16);
    auto model = load_model(original.path());
    save_model(*model, saved.path());

    Json written_config = read_json_file(saved.file("config.json"));
    Json expected_config = config;
    expected_config["torch_dtype"] = "bfloat16";  // always written, for older readers
    EXPECT_EQ(written_config, expected_config);
    auto stored = load_safetensors(original.path());
    auto written = load_safetensors(saved.path());
    std::set<std::string> stored_names, written_names;
    for (const auto& item : stored) stored_names.insert(item.first);
    for (const auto& item : written) written_names.insert(item.first);
    EXPECT_EQ(written_names, stored_names);
    for (const auto& [name, tensor] : stored) {
      if (!written.count(name)) continue;
      EXPECT_EQ(written.at(name).scalar_type(), at::kBFloat16) << name;
      EXPECT_TRUE(at::equal(written.at(name), tensor)) << name;
    }
  }
}

// fp32 checkpoints: the folded norm weight is fl32(1 + w), exactly what HF's forward multiplies by, so the
// saved w may differ from the stored one by the rounding of that sum (half an ulp of 1) and no more; the
// directory written loads into a bit-identical model.
TEST(Gemma3Save, fp32_save_reloads_into_the_identical_model) {
  TinyGemma c;
  c.tied = false;
  torch::manual_seed(29);
  TempDir original, saved;
  const auto weights = gemma_weights(c);
  write_hf_checkpoint(original.path(), gemma_config(c), weights);
  auto model = load_model(original.path());
  save_model(*model, saved.path());
  auto reloaded = load_model(saved.path());

  auto a = model->named_parameters(), b = reloaded->named_parameters();
  ASSERT_EQ(a.size(), b.size());
  for (const auto& item : a) EXPECT_TRUE(at::equal(item.value(), b[item.key()])) << item.key();

  auto written = load_safetensors(saved.path());
  ASSERT_EQ(written.size(), weights.size());
  for (const auto& [name, tensor] : weights) {
    ASSERT_TRUE(written.count(name)) << name;
    const double tolerance = is_gemma_norm_weight(name) ? std::ldexp(1.0, -24) : 0.0;
    EXPECT_TENSORS_CLOSE(written.at(name), tensor, tolerance);
  }
}

// ---- broken checkpoints: each rejected with a message that names the tensor or the field

class Gemma3BrokenCheckpoint : public ::testing::Test {
 protected:
  void SetUp() override {
    torch::manual_seed(30);
    weights = gemma_weights(c);
    config = gemma_config(c);
  }
  std::string load_error() {
    write_hf_checkpoint(dir.path(), config, weights);
    return error_of([&] { load_model(dir.path()); });
  }
  TinyGemma c;
  Weights weights;
  Json config;
  TempDir dir;
};

TEST_F(Gemma3BrokenCheckpoint, missing_tensor_is_rejected_by_name) {
  weights.erase("model.layers.2.self_attn.q_norm.weight");
  auto message = load_error();
  EXPECT_NE(message.find("model.layers.2.self_attn.q_norm.weight"), std::string::npos) << message;
  EXPECT_NE(message.find("missing"), std::string::npos) << message;
}

TEST_F(Gemma3BrokenCheckpoint, wrong_shape_is_rejected_by_name) {
  weights["model.layers.1.post_feedforward_layernorm.weight"] = random_weight({c.hidden + 1}, 0.1);
  auto message = load_error();
  EXPECT_NE(message.find("model.layers.1.post_feedforward_layernorm.weight"), std::string::npos) << message;
  EXPECT_NE(message.find("shape"), std::string::npos) << message;
}

TEST_F(Gemma3BrokenCheckpoint, unsupported_model_type_is_rejected_by_name) {
  config["model_type"] = "gemma2";
  auto message = load_error();
  EXPECT_NE(message.find("model_type"), std::string::npos) << message;
  EXPECT_NE(message.find("gemma2"), std::string::npos) << message;
}

TEST_F(Gemma3BrokenCheckpoint, unsupported_architecture_is_rejected_by_name) {
  config["architectures"] = {"Gemma3ForSequenceClassification"};
  auto message = load_error();
  EXPECT_NE(message.find("architectures"), std::string::npos) << message;
  EXPECT_NE(message.find("Gemma3ForSequenceClassification"), std::string::npos) << message;
}

TEST_F(Gemma3BrokenCheckpoint, malformed_config_fields_are_rejected_by_name) {
  struct Case {
    std::string field;
    Json value;
  };
  const std::vector<Case> cases{
      {"hidden_size", 32.5},
      {"num_key_value_heads", 3},
      {"sliding_window", 0},
      {"query_pre_attn_scalar", -1.0},
      {"hidden_activation", "relu"},
      {"rope_theta", "large"},
      {"rope_local_base_freq", 0.5},
      {"sliding_window_pattern", 0},
      {"rms_norm_eps", Json::array()},
  };
  const Json good = config;
  for (const auto& bad : cases) {
    config = good;
    config[bad.field] = bad.value;
    auto message = load_error();
    EXPECT_NE(message.find(bad.field), std::string::npos) << bad.field << ": " << message;
  }
}

TEST_F(Gemma3BrokenCheckpoint, malformed_layer_types_are_rejected_by_name) {
  c.new_schema = true;
  const Json good = gemma_config(c);
  config = good;
  config["layer_types"] = {"sliding_attention", "full_attention"};  // 2 entries for 5 layers
  auto message = load_error();
  EXPECT_NE(message.find("layer_types"), std::string::npos) << message;

  config = good;
  config["layer_types"][3] = "chunked_attention";
  message = load_error();
  EXPECT_NE(message.find("layer_types"), std::string::npos) << message;
  EXPECT_NE(message.find("chunked_attention"), std::string::npos) << message;

  config = good;
  config["rope_parameters"]["full_attention"] = Json{{"rope_type", "dynamic"}, {"factor", 2.0}};
  message = load_error();
  EXPECT_NE(message.find("rope_type"), std::string::npos) << message;
  EXPECT_NE(message.find("dynamic"), std::string::npos) << message;
}

}  // namespace
}  // namespace swarmt::models
