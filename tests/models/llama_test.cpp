// LlamaForCausalLM from Hugging Face checkpoints (specs/hf-formats.md §2.1-2.2): tiny random checkpoints
// in exact HF layout are written here, loaded with load_model, and compared with a plain fp64 reference of
// the forward pass; cached decoding, saving and the rejection of broken checkpoints are checked as well.
#include "swarmt/models/llama.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <functional>
#include <set>

#include "models/decode_paths.h"
#include "models/hf_checkpoint.h"
#include "ops/kernel_levels.h"
#include "swarmt/infer/token_stream.h"
#include "swarmt/models/model_io.h"

namespace swarmt::models {
namespace {

using namespace swarmt::testing::hf;
using swarmt::testing::TempDir;
using swarmt::testing::write_file;

// A tiny Llama. head_dim is given explicitly and differs from hidden_size / num_attention_heads, as in
// checkpoints that set it; kv heads are grouped (2 query heads per kv head).
struct TinyLlama {
  std::string name = "tied";
  int64_t vocab = 61, hidden = 32, layers = 2, heads = 4, kv_heads = 2, head_dim = 12, ffn = 48;
  double eps = 1e-5, theta = 10000.0;
  bool tied = true;
  bool bias = false;  // attention_bias and mlp_bias
  Json rope_scaling = nullptr;
};

Json llama_config(const TinyLlama& c, const std::string& dtype = "float32") {
  return Json{{"architectures", {"LlamaForCausalLM"}},
              {"model_type", "llama"},
              {"hidden_size", c.hidden},
              {"num_hidden_layers", c.layers},
              {"num_attention_heads", c.heads},
              {"num_key_value_heads", c.kv_heads},
              {"head_dim", c.head_dim},
              {"intermediate_size", c.ffn},
              {"hidden_act", "silu"},
              {"max_position_embeddings", 8192},
              {"rope_theta", c.theta},
              {"rope_scaling", c.rope_scaling},
              {"rope_interleaved", false},
              {"rms_norm_eps", c.eps},
              {"vocab_size", c.vocab},
              {"tie_word_embeddings", c.tied},
              {"attention_bias", c.bias},
              {"attention_dropout", 0.0},
              {"mlp_bias", c.bias},
              {"pretraining_tp", 1},
              {"bos_token_id", 1},
              {"eos_token_id", 2},
              {"pad_token_id", 2},
              {"torch_dtype", dtype},
              {"is_llama_config", true},
              {"initializer_range", 0.02},
              {"use_cache", true},
              {"transformers_version", "4.42.3"}};
}

// Every tensor of the architecture with its HF name and shape ([out, in] for projections).
Weights llama_weights(const TinyLlama& c) {
  const int64_t q_dim = c.heads * c.head_dim, kv_dim = c.kv_heads * c.head_dim;
  Weights w;
  w["model.embed_tokens.weight"] = random_weight({c.vocab, c.hidden}, 1.0);
  for (int64_t l = 0; l < c.layers; ++l) {
    w[layer_name(l, "input_layernorm.weight")] = random_weight({c.hidden}, 0.1, 1.0);
    w[layer_name(l, "self_attn.q_proj.weight")] = random_weight({q_dim, c.hidden}, 0.25);
    w[layer_name(l, "self_attn.k_proj.weight")] = random_weight({kv_dim, c.hidden}, 0.25);
    w[layer_name(l, "self_attn.v_proj.weight")] = random_weight({kv_dim, c.hidden}, 0.25);
    w[layer_name(l, "self_attn.o_proj.weight")] = random_weight({c.hidden, q_dim}, 0.25);
    w[layer_name(l, "post_attention_layernorm.weight")] = random_weight({c.hidden}, 0.1, 1.0);
    w[layer_name(l, "mlp.gate_proj.weight")] = random_weight({c.ffn, c.hidden}, 0.25);
    w[layer_name(l, "mlp.up_proj.weight")] = random_weight({c.ffn, c.hidden}, 0.25);
    w[layer_name(l, "mlp.down_proj.weight")] = random_weight({c.hidden, c.ffn}, 0.25);
    if (c.bias) {
      w[layer_name(l, "self_attn.q_proj.bias")] = random_weight({q_dim}, 0.1);
      w[layer_name(l, "self_attn.k_proj.bias")] = random_weight({kv_dim}, 0.1);
      w[layer_name(l, "self_attn.v_proj.bias")] = random_weight({kv_dim}, 0.1);
      w[layer_name(l, "self_attn.o_proj.bias")] = random_weight({c.hidden}, 0.1);
      w[layer_name(l, "mlp.gate_proj.bias")] = random_weight({c.ffn}, 0.1);
      w[layer_name(l, "mlp.up_proj.bias")] = random_weight({c.ffn}, 0.1);
      w[layer_name(l, "mlp.down_proj.bias")] = random_weight({c.hidden}, 0.1);
    }
  }
  w["model.norm.weight"] = random_weight({c.hidden}, 0.1, 1.0);
  if (!c.tied) w["lm_head.weight"] = random_weight({c.vocab, c.hidden}, 0.25);
  return w;
}

// Inverse frequencies with HF's rope_scaling: "linear" divides every θ_i by factor; "llama3"
// (`_compute_llama3_parameters`) divides the low frequencies (wavelength 2π/θ above
// original_max / low_freq_factor) by factor, keeps the high ones (below original_max / high_freq_factor)
// and blends in between with s = (original_max / wavelength − low) / (high − low):
// θ' = (1 − s) θ / factor + s θ.
std::vector<double> llama_inv_freq(const TinyLlama& c) {
  auto inv_freq = rope_frequencies(c.head_dim, c.theta);
  if (c.rope_scaling.is_null()) return inv_freq;
  const std::string type = c.rope_scaling.at("rope_type");
  const double factor = c.rope_scaling.at("factor");
  for (double& f : inv_freq) {
    if (type == "linear") {
      f /= factor;
      continue;
    }
    const double low = c.rope_scaling.at("low_freq_factor"), high = c.rope_scaling.at("high_freq_factor");
    const double old_context = c.rope_scaling.at("original_max_position_embeddings");
    const double wavelength = 2.0 * 3.14159265358979323846 / f;
    const bool low_frequency = wavelength > old_context / low, high_frequency = wavelength < old_context / high;
    const double scaled = low_frequency ? f / factor : f;
    const double s = (old_context / wavelength - low) / (high - low);
    f = (!low_frequency && !high_frequency) ? (1.0 - s) * scaled / factor + s * scaled : scaled;
  }
  return inv_freq;
}

at::Tensor optional_weight(const Weights& w, const std::string& name) {
  auto it = w.find(name);
  return it == w.end() ? at::Tensor() : it->second;
}

// The HF Llama forward pass of one sequence, fp64: ids (N) -> logits (N, V).
//   x = E[ids]; per layer: x += o_proj(Attn(RoPE q, RoPE k, v)) of RMSNorm(x), then
//   x += down(silu_reference(gate h) * up h) of RMSNorm(x); logits = RMSNorm(x) (lm_head or E)ᵀ.
at::Tensor llama_reference(const Weights& w, const TinyLlama& c, const at::Tensor& ids) {
  auto x = weight(w, "model.embed_tokens.weight").index_select(0, ids);  // (N, d), no scaling
  const auto inv_freq = llama_inv_freq(c);
  auto rotate = [&](const at::Tensor& head, bool) { return rope_rotate(head, inv_freq); };
  for (int64_t l = 0; l < c.layers; ++l) {
    auto p = [&](const std::string& rest) { return layer_name(l, rest); };
    auto h = rms_normalize(x, c.eps) * weight(w, p("input_layernorm.weight"));
    auto q = apply_linear(h, weight(w, p("self_attn.q_proj.weight")), optional_weight(w, p("self_attn.q_proj.bias")));
    auto k = apply_linear(h, weight(w, p("self_attn.k_proj.weight")), optional_weight(w, p("self_attn.k_proj.bias")));
    auto v = apply_linear(h, weight(w, p("self_attn.v_proj.weight")), optional_weight(w, p("self_attn.v_proj.bias")));
    auto attn = grouped_attention(q, k, v, c.heads, c.kv_heads, c.head_dim, rotate,
                                  1.0 / std::sqrt(static_cast<double>(c.head_dim)), /*window=*/0);
    x = x + apply_linear(attn, weight(w, p("self_attn.o_proj.weight")), optional_weight(w, p("self_attn.o_proj.bias")));
    h = rms_normalize(x, c.eps) * weight(w, p("post_attention_layernorm.weight"));
    auto gate = apply_linear(h, weight(w, p("mlp.gate_proj.weight")), optional_weight(w, p("mlp.gate_proj.bias")));
    auto up = apply_linear(h, weight(w, p("mlp.up_proj.weight")), optional_weight(w, p("mlp.up_proj.bias")));
    x = x + apply_linear(silu_reference(gate) * up, weight(w, p("mlp.down_proj.weight")), optional_weight(w, p("mlp.down_proj.bias")));
  }
  auto h = rms_normalize(x, c.eps) * weight(w, "model.norm.weight");
  return apply_linear(h, c.tied ? weight(w, "model.embed_tokens.weight") : weight(w, "lm_head.weight"));
}

std::vector<TinyLlama> llama_variants() {
  std::vector<TinyLlama> v;
  v.push_back(TinyLlama{});
  TinyLlama untied;
  untied.name = "untied";
  untied.tied = false;
  v.push_back(untied);
  TinyLlama biased;
  biased.name = "attention_and_mlp_bias";
  biased.bias = true;
  biased.tied = false;
  v.push_back(biased);
  TinyLlama linear_scaling;
  linear_scaling.name = "rope_scaling_linear";
  linear_scaling.theta = 500.0;
  linear_scaling.rope_scaling = Json{{"rope_type", "linear"}, {"factor", 4.0}};
  v.push_back(linear_scaling);
  // Wavelengths of θ_i = 10000^(-2i/12): 6.3, 29, 135, 628, 2900, 13500; with original_max 128,
  // low 0.5 and high 8 (bounds 256 and 16) the first is kept, the second and third blend and the last
  // three are divided by the factor.
  TinyLlama llama3;
  llama3.name = "rope_scaling_llama3";
  llama3.rope_scaling = Json{{"rope_type", "llama3"},
                             {"factor", 8.0},
                             {"low_freq_factor", 0.5},
                             {"high_freq_factor", 8.0},
                             {"original_max_position_embeddings", 128}};
  v.push_back(llama3);
  // Older configs name the scaling type "type".
  TinyLlama legacy;
  legacy.name = "rope_scaling_legacy_type_key";
  legacy.rope_scaling = Json{{"type", "linear"}, {"factor", 2.0}};
  v.push_back(legacy);
  return v;
}

void PrintTo(const TinyLlama& c, std::ostream* os) { *os << c.name; }

class LlamaCheckpoint : public ::testing::TestWithParam<TinyLlama> {};

TEST_P(LlamaCheckpoint, forward_equals_reference_forward) {
  TinyLlama c = GetParam();
  if (c.rope_scaling.contains("type")) {  // the reference reads rope_type
    c.rope_scaling["rope_type"] = c.rope_scaling["type"];
  }
  torch::manual_seed(11);
  TempDir dir;
  const auto weights = llama_weights(c);
  write_hf_checkpoint(dir.path(), llama_config(GetParam()), weights);
  auto model = load_model(dir.path(), in_float64());
  EXPECT_EQ(model->model_type(), "llama");
  EXPECT_EQ(model->dtype(), at::kDouble);

  const int64_t n = 23;
  auto tokens = random_tokens(2, n, c.vocab);
  at::NoGradGuard no_grad;
  auto logits = model->forward(tokens);
  ASSERT_EQ(logits.sizes().vec(), (std::vector<int64_t>{2, n, c.vocab}));
  const auto reference_weights = as_float64(weights, at::kFloat);
  for (int64_t b = 0; b < 2; ++b)
    EXPECT_TENSORS_CLOSE(logits[b], llama_reference(reference_weights, c, tokens[b]), 1e-10) << "sequence " << b;
}

INSTANTIATE_TEST_SUITE_P(Variants, LlamaCheckpoint, ::testing::ValuesIn(llama_variants()),
                         [](const ::testing::TestParamInfo<TinyLlama>& info) { return info.param.name; });

// The state API (chunked prefill, chunks of any length, then one token at a time) gives the logits of the
// full forward, for two sequences at once.
TEST(LlamaDecoding, cached_decoding_equals_full_forward) {
  TinyLlama c;
  c.tied = false;
  torch::manual_seed(12);
  TempDir dir;
  write_hf_checkpoint(dir.path(), llama_config(c), llama_weights(c));
  auto model = load_model(dir.path(), in_float64());
  at::NoGradGuard no_grad;
  const int64_t n = 29;
  auto tokens = random_tokens(2, n, c.vocab);
  auto full = model->forward(tokens);

  auto state = model->new_state(2);
  std::vector<at::Tensor> pieces;
  pieces.push_back(model->forward_stateful(tokens.narrow(1, 0, 11), state));
  pieces.push_back(model->forward_stateful(tokens.narrow(1, 11, 1), state));
  pieces.push_back(model->forward_stateful(tokens.narrow(1, 12, 6), state));
  for (int64_t t = 18; t < n; ++t) pieces.push_back(model->forward_stateful(tokens.narrow(1, t, 1), state));
  EXPECT_EQ(state.position, n);
  EXPECT_TENSORS_CLOSE(at::cat(pieces, 1), full, 1e-10);
}

// Generation's token stream (prompt prefilled in chunks of 4, then single tokens) returns the logits of
// the full forward at the last token fed.
TEST(LlamaDecoding, token_stream_equals_full_forward) {
  TinyLlama c;
  torch::manual_seed(13);
  TempDir dir;
  write_hf_checkpoint(dir.path(), llama_config(c), llama_weights(c));
  auto model = load_model(dir.path(), in_float64());
  const int64_t n = 17, prompt = 10;
  auto tokens = random_tokens(1, n, c.vocab);
  at::Tensor full;
  {
    at::NoGradGuard no_grad;
    full = model->forward(tokens)[0];  // (N, V)
  }
  infer::CausalLMStream stream(model, /*prefill_chunk=*/4);
  EXPECT_TENSORS_CLOSE(stream.feed(tokens[0].narrow(0, 0, prompt)), full[prompt - 1], 1e-10);
  for (int64_t t = prompt; t < n; ++t) EXPECT_TENSORS_CLOSE(stream.feed(tokens[0].narrow(0, t, 1)), full[t], 1e-10);
  EXPECT_EQ(stream.position(), n);
}

// Calls body(model, dtype) with the checkpoint in `dir` loaded in fp32 and in bf16, on every kernel level
// of ops/matvec.h this CPU has; the best level is restored afterwards.
void for_each_kernel_level_and_dtype(const std::string& dir,
                                     const std::function<void(const std::shared_ptr<CausalLM>&, at::ScalarType)>& body) {
  ops::for_each_kernel_level([&] {
    for (auto dtype : {at::kFloat, at::kBFloat16}) {
      SCOPED_TRACE(dtype == at::kFloat ? "fp32" : "bf16");
      models::LoadOptions options;
      options.dtype = dtype;
      body(load_model(dir, options), dtype);
    }
  });
}

// Decoding in the dtypes users run (fp32, bf16) takes the decode kernels (ops/matvec.h for every
// projection and the head, the cache attention kernel) while the full forward takes the GEMM path; they
// compute the same function: fp32 logits agree to fp32 rounding, bf16 ones to bf16 rounding, at every
// position of a prompt fed in chunks and then token by token, on every kernel level this CPU has.
TEST(LlamaDecoding, fp32_and_bf16_decoding_through_the_decode_kernels_equals_the_full_forward) {
  TinyLlama c;
  c.bias = true;  // the matvec path adds biases too
  torch::manual_seed(16);
  TempDir dir;
  write_hf_checkpoint(dir.path(), llama_config(c), llama_weights(c));
  const int64_t n = 23, prompt = 9;
  auto tokens = random_tokens(1, n, c.vocab);
  for_each_kernel_level_and_dtype(dir.path(), [&](const std::shared_ptr<CausalLM>& model, at::ScalarType dtype) {
    at::Tensor full;
    {
      at::NoGradGuard no_grad;
      full = model->forward(tokens)[0].to(at::kDouble);  // (N, V)
    }
    const double tol = (dtype == at::kFloat ? 1e-5 : 0.03) * full.abs().max().item<double>();
    infer::CausalLMStream stream(model, /*prefill_chunk=*/4);
    EXPECT_TENSORS_CLOSE(stream.feed(tokens[0].narrow(0, 0, prompt)).to(at::kDouble), full[prompt - 1], tol);
    for (int64_t t = prompt; t < n; ++t)
      EXPECT_TENSORS_CLOSE(stream.feed(tokens[0].narrow(0, t, 1)).to(at::kDouble), full[t], tol);
  });
}

// A decode step on raw buffers (one tensor per block instead of about forty ops) gives the logits of the
// blocks' tensor ops bit for bit, in fp32 and bf16, on every kernel level this CPU has, with a growing
// cache; every block and every attention layer takes it.
TEST(LlamaDecoding, decoding_on_raw_buffers_equals_the_tensor_ops_bit_for_bit) {
  TinyLlama c;
  c.layers = 3;
  torch::manual_seed(17);
  TempDir dir;
  write_hf_checkpoint(dir.path(), llama_config(c), llama_weights(c));
  const int64_t n = 21;
  const auto tokens = random_tokens(1, n, c.vocab);
  for_each_kernel_level_and_dtype(dir.path(), [&](const std::shared_ptr<CausalLM>& model, at::ScalarType) {
    const nn::RawDecodeSteps steps = testing::expect_raw_decode_equals_tensor_decode(*model, tokens);
    EXPECT_EQ(steps.blocks, n * c.layers);
    EXPECT_EQ(steps.mixers, n * c.layers);
  });
}

// With biases (attention_bias, mlp_bias) blocks keep their tensor ops: the raw path has no bias terms.
TEST(LlamaDecoding, blocks_with_biases_decode_through_their_tensor_ops) {
  TinyLlama c;
  c.bias = true;
  torch::manual_seed(18);
  TempDir dir;
  write_hf_checkpoint(dir.path(), llama_config(c), llama_weights(c));
  auto model = load_model(dir.path());
  const nn::RawDecodeSteps steps = testing::expect_raw_decode_equals_tensor_decode(*model, random_tokens(1, 5, c.vocab));
  EXPECT_EQ(steps.blocks, 0);
  EXPECT_EQ(steps.mixers, 0);
}

// bf16 checkpoints (the published format) stay bf16 unless asked otherwise, and run close to the fp64
// reference of the same (bf16-rounded) weights; asked for fp64, they match it tightly.
TEST(LlamaCheckpointDtype, bf16_checkpoint_loads_as_bf16_and_as_requested) {
  TinyLlama c;
  torch::manual_seed(14);
  TempDir dir;
  const auto weights = llama_weights(c);
  write_hf_checkpoint(dir.path(), llama_config(c, "bfloat16"), weights, at::kBFloat16);
  auto tokens = random_tokens(1, 15, c.vocab);
  auto expected = llama_reference(as_float64(weights, at::kBFloat16), c, tokens[0]);
  at::NoGradGuard no_grad;

  auto native = load_model(dir.path());
  EXPECT_EQ(native->dtype(), at::kBFloat16);
  auto bf16_logits = native->forward(tokens)[0].to(at::kDouble);
  const double scale = expected.abs().max().item<double>();
  EXPECT_TENSORS_CLOSE(bf16_logits, expected, 0.05 * scale);

  auto exact = load_model(dir.path(), in_float64());
  EXPECT_TENSORS_CLOSE(exact->forward(tokens)[0], expected, 1e-10);
}

// Newer transformers write "dtype" instead of "torch_dtype"; the stored bf16 weights still load as bf16.
TEST(LlamaCheckpointDtype, dtype_field_of_newer_configs_is_honoured) {
  TinyLlama c;
  torch::manual_seed(15);
  TempDir dir;
  Json config = llama_config(c);
  config.erase("torch_dtype");
  config["dtype"] = "bfloat16";
  write_hf_checkpoint(dir.path(), config, llama_weights(c), at::kBFloat16);
  EXPECT_EQ(load_model(dir.path())->dtype(), at::kBFloat16);
}

// A checkpoint split into shards with model.safetensors.index.json loads like the single file.
TEST(LlamaCheckpointLayout, sharded_checkpoint_equals_single_file) {
  TinyLlama c;
  c.tied = false;
  torch::manual_seed(16);
  TempDir single, sharded;
  const auto weights = llama_weights(c);
  write_hf_checkpoint(single.path(), llama_config(c), weights);
  NamedTensors tensors(weights.begin(), weights.end());
  auto files = save_safetensors_model(sharded.path(), tensors, {{"format", "pt"}}, /*max_shard_bytes=*/40000);
  ASSERT_GT(files.size(), 1u);
  ASSERT_TRUE(std::filesystem::exists(sharded.file("model.safetensors.index.json")));
  write_file(sharded.file("config.json"), llama_config(c).dump(2));

  auto tokens = random_tokens(1, 9, c.vocab);
  at::NoGradGuard no_grad;
  EXPECT_TRUE(at::equal(load_model(sharded.path())->forward(tokens), load_model(single.path())->forward(tokens)));
}

// save_model writes config.json and the tensors under HF's names (no lm_head when tied, as transformers
// saves it), with the stored values bit for bit, so the saved directory loads into the same model.
TEST(LlamaSave, save_round_trips_names_config_and_values) {
  for (bool tied : {true, false}) {
    SCOPED_TRACE(tied ? "tied" : "untied");
    TinyLlama c;
    c.tied = tied;
    torch::manual_seed(17);
    TempDir original, saved;
    const auto weights = llama_weights(c);
    const Json config = llama_config(c, "bfloat16");
    write_hf_checkpoint(original.path(), config, weights, at::kBFloat16);
    auto model = load_model(original.path());
    save_model(*model, saved.path());

    EXPECT_EQ(read_json_file(saved.file("config.json")), config);
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
    auto tokens = random_tokens(1, 8, c.vocab);
    at::NoGradGuard no_grad;
    EXPECT_TRUE(at::equal(load_model(saved.path())->forward(tokens), model->forward(tokens)));
  }
}

// ---- broken checkpoints: each rejected with a message that names the tensor or the field

class LlamaBrokenCheckpoint : public ::testing::Test {
 protected:
  void SetUp() override {
    torch::manual_seed(18);
    c.tied = false;
    weights = llama_weights(c);
    config = llama_config(c);
  }
  std::string load_error() {
    write_hf_checkpoint(dir.path(), config, weights);
    return error_of([&] { load_model(dir.path()); });
  }
  TinyLlama c;
  Weights weights;
  Json config;
  TempDir dir;
};

TEST_F(LlamaBrokenCheckpoint, missing_tensor_is_rejected_by_name) {
  weights.erase("model.layers.1.mlp.up_proj.weight");
  auto message = load_error();
  EXPECT_NE(message.find("model.layers.1.mlp.up_proj.weight"), std::string::npos) << message;
  EXPECT_NE(message.find("missing"), std::string::npos) << message;
}

TEST_F(LlamaBrokenCheckpoint, missing_lm_head_of_untied_model_is_rejected_by_name) {
  weights.erase("lm_head.weight");
  auto message = load_error();
  EXPECT_NE(message.find("lm_head.weight"), std::string::npos) << message;
}

TEST_F(LlamaBrokenCheckpoint, wrong_shape_is_rejected_by_name) {
  weights["model.layers.0.self_attn.k_proj.weight"] = random_weight({c.heads * c.head_dim, c.hidden}, 0.1);
  auto message = load_error();
  EXPECT_NE(message.find("model.layers.0.self_attn.k_proj.weight"), std::string::npos) << message;
  EXPECT_NE(message.find("shape"), std::string::npos) << message;
}

TEST_F(LlamaBrokenCheckpoint, unsupported_model_type_is_rejected_by_name) {
  config["model_type"] = "mamba";
  auto message = load_error();
  EXPECT_NE(message.find("model_type"), std::string::npos) << message;
  EXPECT_NE(message.find("mamba"), std::string::npos) << message;
}

// A Llama backbone with another head (sequence classification) is not a causal LM we can run.
TEST_F(LlamaBrokenCheckpoint, unsupported_architecture_is_rejected_by_name) {
  config["architectures"] = {"LlamaForSequenceClassification"};
  auto message = load_error();
  EXPECT_NE(message.find("architectures"), std::string::npos) << message;
  EXPECT_NE(message.find("LlamaForSequenceClassification"), std::string::npos) << message;
}

TEST_F(LlamaBrokenCheckpoint, malformed_config_fields_are_rejected_by_name) {
  struct Case {
    std::string field;
    Json value;
  };
  const std::vector<Case> cases{
      {"hidden_size", "32"},
      {"num_hidden_layers", -1},
      {"num_key_value_heads", 3},
      {"head_dim", 7},
      {"rms_norm_eps", "small"},
      {"hidden_act", "relu"},
      {"tie_word_embeddings", "yes"},
      {"vocab_size", 0},
  };
  const Json good = config;
  for (const auto& bad : cases) {
    config = good;
    config[bad.field] = bad.value;
    auto message = load_error();
    EXPECT_NE(message.find(bad.field), std::string::npos) << bad.field << ": " << message;
  }
}

TEST_F(LlamaBrokenCheckpoint, unsupported_rope_scaling_is_rejected_by_name) {
  config["rope_scaling"] = Json{{"rope_type", "yarn"}, {"factor", 4.0}};
  auto message = load_error();
  EXPECT_NE(message.find("rope_type"), std::string::npos) << message;
  EXPECT_NE(message.find("yarn"), std::string::npos) << message;

  config["rope_scaling"] = Json{{"rope_type", "llama3"}, {"factor", 8.0}};  // without its other fields
  message = load_error();
  EXPECT_NE(message.find("low_freq_factor"), std::string::npos) << message;
}

TEST_F(LlamaBrokenCheckpoint, missing_config_is_rejected) {
  write_hf_checkpoint(dir.path(), config, weights);
  std::filesystem::remove(dir.file("config.json"));
  auto message = error_of([&] { load_model(dir.path()); });
  EXPECT_NE(message.find("config.json"), std::string::npos) << message;
}

}  // namespace
}  // namespace swarmt::models
