// The decoder block of every architecture here, written once for any token mixer (nn/mixer.h):
//
//   h = x + N_mo( mixer( N_mi(x) ) )        N_mi: input_layernorm
//   y = h + N_fo( MLP( N_fi(h) ) )          MLP: gated (SwiGLU or GeGLU)
//
// Pre-norm blocks (Llama, SWAX) have no output norms (N_mo = N_fo = identity) and N_fi is
// post_attention_layernorm. Gemma-3's "sandwich" norms add the output norms; its names are then
//   N_mo = post_attention_layernorm, N_fi = pre_feedforward_layernorm, N_fo = post_feedforward_layernorm.
// Tensor names (Hugging Face's): input_layernorm, <mixer name>.*, the norms above, mlp.*.
#pragma once

#include <torch/torch.h>

#include <memory>
#include <string>

#include "swarmt/core/error.h"
#include "swarmt/nn/decoder_layer.h"
#include "swarmt/nn/gated_mlp.h"
#include "swarmt/nn/mixer.h"
#include "swarmt/nn/norms.h"

namespace swarmt::nn {

struct ResidualBlockOptions {
  std::string mixer_name = "self_attn";  // the mixer's tensor-name prefix (SWAX: self_attn, mlstm, gdn)
  int64_t hidden_size = 0;
  int64_t intermediate_size = 0;
  Activation activation = Activation::SiLU;
  bool mlp_bias = false;
  double norm_eps = 1e-6;
  bool norm_cast_before_weight = true;   // false: Gemma-3 multiplies by its (folded 1 + w) weight in fp32
  bool sandwich_norms = false;           // Gemma-3: norm the outputs of the mixer and of the MLP too
};

// Whether blocks decode one token on raw buffers (the default) or through their tensor ops; tests and
// benchmarks compare the two in one process. Process-wide.
void set_decode_on_raw_buffers(bool on);
bool decode_on_raw_buffers();
// Block steps taken on raw buffers since the process started, and those of them whose mixer had its own
// raw path (Mixer::decode_token); tests check that a model's decode takes the path they compare.
struct RawDecodeSteps {
  int64_t blocks = 0;
  int64_t mixers = 0;
};
RawDecodeSteps raw_decode_steps();

class ResidualBlock : public DecoderLayer {
 public:
  ResidualBlock(std::shared_ptr<Mixer> mixer, const ResidualBlockOptions& options);

  at::Tensor forward(const at::Tensor& x, const LayerContext& ctx) override;
  at::Tensor forward_stateful(const at::Tensor& x, LayerState& state) override;
  std::unique_ptr<LayerState> new_state(int64_t batch, at::ScalarType dtype, at::Device device) const override {
    return mixer->new_state(batch, dtype, device);
  }
  int64_t window() const override { return mixer->window(); }
  void set_window(int64_t window) override { mixer->set_window(window); }
  bool is_recurrent() const override { return mixer->is_recurrent(); }

  // The mixer as its own type, for code that reads a kind's tensors; throws if it is of another type.
  template <typename MixerType>
  MixerType& mixer_as() const {
    auto* typed = dynamic_cast<MixerType*>(mixer.get());
    SWARMT_CHECK(typed != nullptr, "the block's mixer '", options_.mixer_name, "' is not of the requested type");
    return *typed;
  }
  const ResidualBlockOptions& options() const { return options_; }

  RMSNorm input_layernorm{nullptr};      // N_mi
  std::shared_ptr<Mixer> mixer;          // registered under options.mixer_name
  RMSNorm mixer_output_norm{nullptr};    // N_mo, sandwich only
  RMSNorm mlp_input_norm{nullptr};       // N_fi
  GatedMLP mlp{nullptr};
  RMSNorm mlp_output_norm{nullptr};      // N_fo, sandwich only

 private:
  at::Tensor add_mixer_output(const at::Tensor& x, const at::Tensor& mixed);  // x + N_mo(mixed)
  at::Tensor add_feed_forward(const at::Tensor& h);                           // h + N_fo(MLP(N_fi(h)))
  // One token of one sequence on raw buffers (nn/residual_block_decode.cpp): the block's result, or an
  // undefined tensor where that path does not apply (then nothing has changed).
  at::Tensor decode_token(const at::Tensor& x, LayerState& state);
  template <typename T>
  at::Tensor decode_token_typed(const at::Tensor& x, LayerState& state);

  ResidualBlockOptions options_;
};

}  // namespace swarmt::nn
