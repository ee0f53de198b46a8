// The block's decode step on raw buffers: forward_stateful for one token of one sequence, value for
// value, with one tensor (the result) instead of about forty ops per block. Each step rounds where the
// ATen path rounds, in the model's dtype T:
//   x̂ = N_mi(x);  m = mixer(x̂) (its raw path, Mixer::decode_token, or forward_stateful);  [m = N_mo(m)]
//   h = T(x + m);  ĥ = N_fi(h);  [g | u] = ĥ [W_g | W_u]ᵀ in fp32 (one pass);  a = T(act(T(g))) ⊙ T(u)
//   y = T(a W_dᵀ);  [y = N_fo(y)];  out = T(h + y)
#include <atomic>
#include <cstring>
#include <vector>

#include "swarmt/nn/decode_buffers.h"
#include "swarmt/nn/residual_block.h"
#include "swarmt/ops/matvec.h"

namespace swarmt::nn {

namespace {
std::atomic<bool>& raw_decode_switch() {
  static std::atomic<bool> on{true};
  return on;
}
std::atomic<int64_t> raw_block_steps{0}, raw_mixer_steps{0};
}  // namespace

RawDecodeSteps raw_decode_steps() { return {raw_block_steps.load(), raw_mixer_steps.load()}; }

void set_decode_on_raw_buffers(bool on) { raw_decode_switch().store(on); }
bool decode_on_raw_buffers() { return raw_decode_switch().load(std::memory_order_relaxed); }

at::Tensor ResidualBlock::decode_token(const at::Tensor& x, LayerState& state) {
  if (!decode_on_raw_buffers()) return {};
  if (!x.defined() || !x.device().is_cpu() || x.dim() != 3 || x.size(0) != 1 || x.size(1) != 1) return {};
  if (x.scalar_type() == at::kFloat) return decode_token_typed<float>(x, state);
  if (x.scalar_type() == at::kBFloat16) return decode_token_typed<at::BFloat16>(x, state);
  return {};
}

template <typename T>
at::Tensor ResidualBlock::decode_token_typed(const at::Tensor& x, LayerState& state) {
  const int64_t hidden = options_.hidden_size;
  if (x.size(2) != hidden || !decode::readable_as<T>(x) || mlp->gate_proj->bias.defined() ||
      mlp->up_proj->bias.defined() || mlp->down_proj->bias.defined())
    return {};
  for (const auto* w : {&mlp->gate_proj->weight, &mlp->up_proj->weight, &mlp->down_proj->weight})
    if (!decode::readable_as<T>(*w)) return {};
  for (const RMSNorm* norm : {&input_layernorm, &mixer_output_norm, &mlp_input_norm, &mlp_output_norm})
    if (!norm->is_empty() && !decode::norm_readable(*norm)) return {};

  const int64_t intermediate = mlp->gate_proj->weight.size(0);
  thread_local std::vector<T> typed;
  thread_local std::vector<float> f32;
  T* normed = decode::scratch(typed, 4 * hidden + intermediate);
  T* mixed = normed + hidden;
  T* h = mixed + hidden;
  T* y = h + hidden;
  T* activated = y + hidden;
  float* gate_up = decode::scratch(f32, 2 * intermediate + hidden);
  float* down = gate_up + 2 * intermediate;
  const T* in = x.data_ptr<T>();

  decode::norm_rows(input_layernorm, in, 1, hidden, normed);
  if (mixer->decode_token(normed, state, mixed)) {
    raw_mixer_steps.fetch_add(1, std::memory_order_relaxed);
  } else {
    // A mixer without a raw path (mLSTM, Gated DeltaNet) runs its own ops on the normalised token.
    at::Tensor xn = at::empty_like(x);
    std::memcpy(xn.data_ptr<T>(), normed, static_cast<size_t>(hidden) * sizeof(T));
    const at::Tensor m = mixer->forward_stateful(xn, state).contiguous();
    SWARMT_CHECK(m.scalar_type() == x.scalar_type() && m.numel() == hidden, "mixer '", options_.mixer_name,
                 "' returned ", m.sizes(), " in ", m.scalar_type(), " for one token of ", hidden, " values");
    std::memcpy(mixed, m.data_ptr<T>(), static_cast<size_t>(hidden) * sizeof(T));
  }
  if (!mixer_output_norm.is_empty()) decode::norm_rows(mixer_output_norm, mixed, 1, hidden, mixed);
  for (int64_t i = 0; i < hidden; ++i) h[i] = static_cast<T>(static_cast<float>(in[i]) + static_cast<float>(mixed[i]));

  decode::norm_rows(mlp_input_norm, h, 1, hidden, normed);
  ops::matvec_group_rows({mlp->gate_proj->weight.data_ptr<T>(), mlp->up_proj->weight.data_ptr<T>()},
                         {intermediate, intermediate}, hidden, normed, 1, gate_up);
  gated_product_rows(gate_up, 1, intermediate, mlp->activation, activated);
  ops::matvec_group_rows({mlp->down_proj->weight.data_ptr<T>()}, {hidden}, intermediate, activated, 1, down);
  for (int64_t i = 0; i < hidden; ++i) y[i] = static_cast<T>(down[i]);
  if (!mlp_output_norm.is_empty()) decode::norm_rows(mlp_output_norm, y, 1, hidden, y);

  raw_block_steps.fetch_add(1, std::memory_order_relaxed);
  at::Tensor out = at::empty_like(x);
  T* o = out.data_ptr<T>();
  for (int64_t i = 0; i < hidden; ++i) o[i] = static_cast<T>(static_cast<float>(h[i]) + static_cast<float>(y[i]));
  return out;
}

}  // namespace swarmt::nn
