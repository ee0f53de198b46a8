#include "swarmt/models/swax_mixers.h"

#include <algorithm>

#include "swarmt/core/error.h"
#include "swarmt/models/model_footprint.h"
#include "swarmt/nn/attention_layer.h"
#include "swarmt/nn/gated_deltanet_layer.h"
#include "swarmt/nn/mlstm_layer.h"

namespace swarmt::models {
namespace swax_mixer_table {

// ---- the mixers' options from the config

nn::AttentionLayerOptions attention(const SwaxConfig& c, int64_t window) {
  nn::AttentionLayerOptions o;
  o.hidden_size = c.hidden_size;
  o.num_heads = c.num_attention_heads;
  o.num_kv_heads = c.num_key_value_heads;
  o.head_dim = c.head_dim;
  o.rope_theta = c.rope_theta;
  o.window = window;
  return o;
}

nn::MLSTMLayerOptions mlstm(const SwaxConfig& c) {
  nn::MLSTMLayerOptions o;
  o.hidden_size = c.hidden_size;
  o.num_heads = c.mlstm_num_heads;
  o.qk_head_dim = c.mlstm_qk_head_dim;
  o.v_head_dim = c.mlstm_v_head_dim;
  o.gate_soft_cap = c.mlstm_gate_soft_cap;
  o.chunk_size = c.mlstm_chunk_size;
  o.eps = c.mlstm_eps;
  o.norm_eps = c.mlstm_norm_eps;
  o.conv_size = c.mlstm_conv_size;
  return o;
}

nn::GatedDeltaNetLayerOptions gdn(const SwaxConfig& c) {
  nn::GatedDeltaNetLayerOptions o;
  o.hidden_size = c.hidden_size;
  o.num_heads = c.gdn_num_heads;
  o.head_dim = c.gdn_head_dim;
  o.v_head_dim = c.gdn_v_head_dim;
  o.conv_size = c.gdn_conv_size;
  o.allow_neg_eigval = c.gdn_allow_neg_eigval;
  o.chunk_size = c.gdn_chunk_size;
  o.norm_eps = c.gdn_norm_eps;
  return o;
}

// ---- analytic parameter counts (their large matrices)

double as_real(int64_t n) { return static_cast<double>(n); }

double attention_parameters(const SwaxConfig& c) {
  return attention_projection_parameters(as_real(c.hidden_size), as_real(c.num_attention_heads),
                                         as_real(c.num_key_value_heads), as_real(c.head_dim));
}

// q, k (qk_head_dim), v and output gate (v_head_dim), out.
double mlstm_parameters(const SwaxConfig& c) {
  const double h = as_real(c.hidden_size), heads = as_real(c.mlstm_num_heads);
  return h * heads * (2 * as_real(c.mlstm_qk_head_dim) + 2 * as_real(c.mlstm_v_head_dim)) +
         heads * as_real(c.mlstm_v_head_dim) * h;
}

// q, k (key_dim), v and output gate (value_dim), out.
double gdn_parameters(const SwaxConfig& c) {
  const double h = as_real(c.hidden_size);
  const double key_dim = as_real(c.gdn_num_heads * c.gdn_head_dim);
  const double value_dim = as_real(c.gdn_num_heads) * as_real(c.gdn_v_head_dim);
  return h * (2 * key_dim + 2 * value_dim) + value_dim * h;
}

std::vector<SwaxMixerKind> built_in_kinds() {
  std::vector<SwaxMixerKind> kinds;
  kinds.push_back({'S', "self_attn", "sliding-window attention",
                   [](const SwaxConfig& c) -> std::shared_ptr<nn::Mixer> {
                     SWARMT_CHECK(c.sliding_window > 0, "a sliding-window block needs a window");
                     return nn::AttentionLayer(attention(c, c.sliding_window)).ptr();
                   },
                   attention_parameters});
  kinds.push_back({'A', "self_attn", "full attention",
                   [](const SwaxConfig& c) -> std::shared_ptr<nn::Mixer> {
                     return nn::AttentionLayer(attention(c, /*window=*/0)).ptr();
                   },
                   attention_parameters});
  kinds.push_back({'M', "mlstm", "mLSTM",
                   [](const SwaxConfig& c) -> std::shared_ptr<nn::Mixer> { return nn::MLSTMLayer(mlstm(c)).ptr(); },
                   mlstm_parameters});
  kinds.push_back({'G', "gdn", "Gated DeltaNet",
                   [](const SwaxConfig& c) -> std::shared_ptr<nn::Mixer> {
                     return nn::GatedDeltaNetLayer(gdn(c)).ptr();
                   },
                   gdn_parameters});
  return kinds;
}

constexpr size_t kBuiltInKinds = 4;

std::vector<SwaxMixerKind>& table() {
  static std::vector<SwaxMixerKind> kinds = built_in_kinds();
  return kinds;
}

}  // namespace swax_mixer_table

const std::vector<SwaxMixerKind>& swax_mixer_kinds() { return swax_mixer_table::table(); }

const SwaxMixerKind* find_swax_mixer_kind(char letter) {
  for (const auto& kind : swax_mixer_table::table())
    if (kind.letter == letter) return &kind;
  return nullptr;
}

const SwaxMixerKind& swax_mixer_kind(char letter) {
  const SwaxMixerKind* kind = find_swax_mixer_kind(letter);
  if (kind == nullptr) throw_internal_error("unknown SWAX mixer kind '", letter, "'");
  return *kind;
}

std::string describe_swax_mixer_kinds() {
  const auto& kinds = swax_mixer_table::table();
  std::string out;
  for (size_t i = 0; i < kinds.size(); ++i) {
    if (i > 0) out += i + 1 == kinds.size() ? " and " : ", ";
    out += std::string(1, kinds[i].letter) + " (" + kinds[i].description + ")";
  }
  return out;
}

void register_mixer_kind(SwaxMixerKind kind) {
  SWARMT_CHECK_INPUT(kind.letter >= 'A' && kind.letter <= 'Z', "a SWAX mixer kind needs an upper-case letter (got '",
                     kind.letter, "')");
  SWARMT_CHECK_INPUT(find_swax_mixer_kind(kind.letter) == nullptr, "the SWAX mixer letter '", kind.letter,
                     "' is taken by ", swax_mixer_kind(kind.letter).description);
  SWARMT_CHECK_INPUT(!kind.tensor_name.empty() && kind.make && kind.parameters, "the SWAX mixer kind '", kind.letter,
                     "' needs a tensor name, a factory and a parameter count");
  swax_mixer_table::table().push_back(std::move(kind));
}

void unregister_mixer_kind(char letter) {
  auto& kinds = swax_mixer_table::table();
  auto added = kinds.begin() + static_cast<std::ptrdiff_t>(swax_mixer_table::kBuiltInKinds);
  kinds.erase(std::remove_if(added, kinds.end(), [letter](const SwaxMixerKind& k) { return k.letter == letter; }),
              kinds.end());
}

std::shared_ptr<nn::HybridBlock> make_swax_block(const SwaxConfig& config, char letter) {
  const SwaxMixerKind& kind = swax_mixer_kind(letter);
  nn::ResidualBlockOptions o;
  o.mixer_name = kind.tensor_name;
  o.hidden_size = config.hidden_size;
  o.intermediate_size = config.resolved_intermediate_size();
  o.norm_eps = config.rms_norm_eps;
  return std::make_shared<nn::HybridBlock>(letter, kind.make(config), o);
}

}  // namespace swarmt::models
