// Decoding one token at a time on raw buffers (nn/residual_block_decode.cpp) against the blocks' tensor
// ops, for any model: the same logits, bit for bit.
#pragma once

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "swarmt/models/causal_lm.h"
#include "swarmt/nn/residual_block.h"

namespace swarmt::testing {

// Feeds tokens (1, N) one at a time through fresh states, once with the raw path and once without, and
// expects equal logits at every position. Returns the raw path's block and mixer steps, so that callers
// can check it was taken.
inline nn::RawDecodeSteps expect_raw_decode_equals_tensor_decode(models::CausalLM& model, const at::Tensor& tokens) {
  at::NoGradGuard no_grad;
  auto decode_all = [&](bool raw) {
    nn::set_decode_on_raw_buffers(raw);
    auto state = model.new_state(1);
    std::vector<at::Tensor> logits;
    for (int64_t t = 0; t < tokens.size(1); ++t) logits.push_back(model.forward_stateful(tokens.narrow(1, t, 1), state));
    nn::set_decode_on_raw_buffers(true);
    return at::cat(logits, 1);
  };
  const nn::RawDecodeSteps start = nn::raw_decode_steps();
  const at::Tensor tensor_ops = decode_all(false);
  const nn::RawDecodeSteps before = nn::raw_decode_steps();
  EXPECT_EQ(before.blocks, start.blocks) << "the tensor-ops run took the raw path";
  const at::Tensor raw = decode_all(true);
  const nn::RawDecodeSteps after = nn::raw_decode_steps();
  EXPECT_EQ(raw.scalar_type(), tensor_ops.scalar_type());
  EXPECT_TRUE(at::equal(raw, tensor_ops)) << "max |raw - tensor ops| = "
                                          << (raw.to(at::kDouble) - tensor_ops.to(at::kDouble)).abs().max().item<double>();
  return {after.blocks - before.blocks, after.mixers - before.mixers};
}

}  // namespace swarmt::testing
