// The table of SWAX mixer kinds: every layer-pattern letter and what it means, in one place.
//
//   letter  tensor name  mixer
//   S       self_attn    sliding-window attention (RoPE), window = sliding_window
//   A       self_attn    full causal attention (RoPE)
//   M       mlstm        mLSTM (xLSTM-7B form)
//   G       gdn          Gated DeltaNet
//
// Config validation, model building, the summaries, the memory footprint and `model describe` all read it,
// so a new mixer is one file (an nn::Mixer) and one entry here, or one register_mixer_kind call at run time.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "swarmt/models/swax_config.h"
#include "swarmt/nn/hybrid_block.h"
#include "swarmt/nn/mixer.h"

namespace swarmt::models {

struct SwaxMixerKind {
  char letter = 0;
  std::string tensor_name;  // the mixer's prefix in the checkpoint: model.layers.<i>.<tensor_name>.*
  std::string description;  // "sliding-window attention": error messages, `model describe`
  // Builds the mixer from a (validated) config.
  std::function<std::shared_ptr<nn::Mixer>(const SwaxConfig&)> make;
  // Its parameters, from the shapes alone (floating point: a hostile config may describe more than an
  // int64 counts). A lower bound: its large matrices; norms, gates, biases and convolutions may be left out.
  std::function<double(const SwaxConfig&)> parameters;
};

// The known kinds, built-ins first, in registration order.
const std::vector<SwaxMixerKind>& swax_mixer_kinds();
// The kind of `letter`, or nullptr.
const SwaxMixerKind* find_swax_mixer_kind(char letter);
// The kind of `letter`; an internal error if none (patterns are validated when the config is read).
const SwaxMixerKind& swax_mixer_kind(char letter);
// "S (sliding-window attention), A (full attention), M (mLSTM) and G (Gated DeltaNet)".
std::string describe_swax_mixer_kinds();

// Adds a kind (an experiment, a test's toy mixer). Its letter must be an ASCII upper-case letter that no
// kind holds. Register before reading configs that use it; not safe while other threads read the table.
void register_mixer_kind(SwaxMixerKind kind);
// Removes a kind added by register_mixer_kind (built-ins stay).
void unregister_mixer_kind(char letter);

// The SWAX block of kind `letter`: the residual block around the kind's mixer, registered under its
// tensor name.
std::shared_ptr<nn::HybridBlock> make_swax_block(const SwaxConfig& config, char letter);

}  // namespace swarmt::models
