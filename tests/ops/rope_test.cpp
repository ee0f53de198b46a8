// RoPE: rotate_half pairing, fp64 angles at long range, linear and llama3 frequency scaling.
#include <gtest/gtest.h>

#include <cmath>

#include "swarmt/core/error.h"
#include "swarmt/ops/rope.h"
#include "test_util.h"

namespace swarmt::ops {
namespace {

TEST(RopeTest, inverse_frequencies_are_powers_of_the_base) {
  auto inv_freq = rope_inv_freq(8, 10000.0);
  ASSERT_EQ(inv_freq.scalar_type(), at::kDouble);
  ASSERT_EQ(inv_freq.size(0), 4);
  for (int64_t i = 0; i < 4; ++i) EXPECT_DOUBLE_EQ(inv_freq[i].item<double>(), std::pow(10000.0, -2.0 * i / 8.0));
}

TEST(RopeTest, pairing_rotates_dimension_i_with_i_plus_half) {
  const int64_t dim = 8, half = 4, length = 5, offset = 100;
  auto x = at::randn({2, 3, length, dim}, at::kDouble);
  auto inv_freq = rope_inv_freq(dim, 10000.0);
  auto [cos, sin] = rope_cos_sin(at::arange(offset, offset + length, at::kLong), inv_freq, at::kDouble);
  auto rotated = apply_rope(x, cos, sin);
  auto expected = at::empty_like(x);
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t h = 0; h < 3; ++h)
      for (int64_t n = 0; n < length; ++n)
        for (int64_t i = 0; i < half; ++i) {
          const double angle = (offset + n) * std::pow(10000.0, -2.0 * i / dim);
          const double a = x[b][h][n][i].item<double>(), c = x[b][h][n][i + half].item<double>();
          expected[b][h][n][i] = a * std::cos(angle) - c * std::sin(angle);
          expected[b][h][n][i + half] = c * std::cos(angle) + a * std::sin(angle);
        }
  EXPECT_TENSORS_CLOSE(rotated, expected, 1e-12);
}

TEST(RopeTest, angles_at_position_131071_agree_with_long_double) {
  const int64_t dim = 256;  // Gemma-3 global layers: head_dim 256, base 1e6
  const double base = 1e6;
  auto positions = at::tensor({int64_t{0}, int64_t{65537}, int64_t{131071}}, at::kLong);
  auto inv_freq = rope_inv_freq(dim, base);
  auto [cos64, sin64] = rope_cos_sin(positions, inv_freq, at::kDouble);
  auto [cos32, sin32] = rope_cos_sin(positions, inv_freq, at::kFloat);
  EXPECT_EQ(cos32.scalar_type(), at::kFloat);
  auto expected_cos = at::empty({3, dim / 2}, at::kDouble), expected_sin = at::empty({3, dim / 2}, at::kDouble);
  for (int64_t p = 0; p < 3; ++p)
    for (int64_t i = 0; i < dim / 2; ++i) {
      const long double angle =
          static_cast<long double>(positions[p].item<int64_t>()) / std::pow(static_cast<long double>(base),
                                                                             2.0L * i / static_cast<long double>(dim));
      expected_cos[p][i] = static_cast<double>(std::cos(angle));
      expected_sin[p][i] = static_cast<double>(std::sin(angle));
    }
  EXPECT_TENSORS_CLOSE(cos64, expected_cos, 1e-10);
  EXPECT_TENSORS_CLOSE(sin64, expected_sin, 1e-10);
  // Cast only at the end: the fp32 tables are the correctly rounded long-double values (half an ulp <= 6e-8).
  EXPECT_TENSORS_CLOSE(cos32, expected_cos, 1e-7);
  EXPECT_TENSORS_CLOSE(sin32, expected_sin, 1e-7);
}

TEST(RopeTest, scores_depend_only_on_relative_position) {
  auto q = at::randn({1, 1, 1, 16}, at::kDouble), k = at::randn({1, 1, 1, 16}, at::kDouble);
  auto inv_freq = rope_inv_freq(16, 10000.0);
  auto score = [&](int64_t query_position, int64_t key_position) {
    auto [cq, sq] = rope_cos_sin(at::full({1}, query_position, at::kLong), inv_freq, at::kDouble);
    auto [ck, sk] = rope_cos_sin(at::full({1}, key_position, at::kLong), inv_freq, at::kDouble);
    return (apply_rope(q, cq, sq) * apply_rope(k, ck, sk)).sum().item<double>();
  };
  EXPECT_NEAR(score(10, 3), score(100010, 100003), 1e-9);
  EXPECT_NEAR(score(7, 7), (q * k).sum().item<double>(), 1e-12);
}

TEST(RopeTest, batched_positions_rotate_each_row_at_its_own_offset) {
  auto x = at::randn({2, 3, 4, 8}, at::kDouble);
  auto inv_freq = rope_inv_freq(8, 500.0);
  auto positions = at::stack({at::arange(0, 4, at::kLong), at::arange(1000, 1004, at::kLong)});  // (2, 4)
  auto [cos, sin] = rope_cos_sin(positions, inv_freq, at::kDouble);
  ASSERT_EQ(cos.sizes(), (at::IntArrayRef{2, 4, 4}));
  auto rotated = apply_rope(x, cos, sin);
  for (int64_t b = 0; b < 2; ++b) {
    auto [c, s] = rope_cos_sin(positions[b], inv_freq, at::kDouble);
    EXPECT_TENSORS_CLOSE(rotated.narrow(0, b, 1), apply_rope(x.narrow(0, b, 1), c, s), 0.0);
  }
}

TEST(RopeTest, rotation_preserves_norm_and_its_gradient_is_the_inverse_rotation) {
  auto x = at::randn({1, 2, 6, 8}, at::kDouble).requires_grad_(true);
  auto [cos, sin] = rope_cos_sin(at::arange(6, at::kLong) * 977, rope_inv_freq(8, 10000.0), at::kDouble);
  auto rotated = apply_rope(x, cos, sin);
  EXPECT_TENSORS_CLOSE(rotated.norm(2, -1), x.norm(2, -1), 1e-12);
  auto upstream = at::randn_like(rotated);
  auto grad = torch::autograd::grad({rotated}, {x}, {upstream})[0];
  EXPECT_TENSORS_CLOSE(grad, apply_rope(upstream, cos, -sin), 1e-12);  // Rᵀ = R(−θ)
}

TEST(RopeTest, partial_rotary_leaves_the_remaining_dimensions_unchanged) {
  auto x = at::randn({1, 1, 3, 10}, at::kDouble);
  auto [cos, sin] = rope_cos_sin(at::arange(3, at::kLong), rope_inv_freq(6, 10000.0), at::kDouble);
  auto rotated = apply_rope(x, cos, sin);
  EXPECT_TENSORS_CLOSE(rotated.narrow(-1, 0, 6), apply_rope(x.narrow(-1, 0, 6).contiguous(), cos, sin), 0.0);
  EXPECT_TENSORS_CLOSE(rotated.narrow(-1, 6, 4), x.narrow(-1, 6, 4), 0.0);
}

TEST(RopeTest, linear_scaling_divides_the_inverse_frequencies) {
  RopeScaling linear;
  linear.type = "linear";
  linear.factor = 8.0;
  EXPECT_TENSORS_CLOSE(rope_inv_freq(64, 1e6, linear), rope_inv_freq(64, 1e6) / 8.0, 1e-18);
  // Equivalently, position p with scaling gives the angles of position p / factor without it.
  auto [cos_scaled, sin_scaled] = rope_cos_sin(at::full({1}, 800, at::kLong), rope_inv_freq(64, 1e6, linear), at::kDouble);
  auto [cos_plain, sin_plain] = rope_cos_sin(at::full({1}, 100, at::kLong), rope_inv_freq(64, 1e6), at::kDouble);
  EXPECT_TENSORS_CLOSE(cos_scaled, cos_plain, 1e-12);
  EXPECT_TENSORS_CLOSE(sin_scaled, sin_plain, 1e-12);
}

TEST(RopeTest, llama3_scaling_matches_an_independent_computation) {
  // Llama-3.1 settings: head_dim 128, theta 5e5, factor 8, low 1, high 4, original context 8192.
  RopeScaling llama3;
  llama3.type = "llama3";
  llama3.factor = 8.0;
  llama3.low_freq_factor = 1.0;
  llama3.high_freq_factor = 4.0;
  llama3.original_max_position_embeddings = 8192;
  auto scaled = rope_inv_freq(128, 500000.0, llama3);
  int kept = 0, divided = 0, blended = 0;
  for (int64_t i = 0; i < 64; ++i) {
    // Seen from the number of rotations a frequency makes over the original context.
    const long double theta = 1.0L / std::pow(500000.0L, 2.0L * i / 128.0L);
    const long double rotations = 8192.0L * theta / (2.0L * 3.14159265358979323846L);
    long double expected;
    if (rotations > 4.0L) {  // fast: more than high_freq_factor turns
      expected = theta;
      ++kept;
    } else if (rotations < 1.0L) {  // slow: fewer than low_freq_factor turns
      expected = theta / 8.0L;
      ++divided;
    } else {  // blend of theta/8 and theta with weight (rotations − 1) / (4 − 1)
      const long double weight = (rotations - 1.0L) / 3.0L;
      expected = theta / 8.0L + weight * (theta - theta / 8.0L);
      ++blended;
    }
    EXPECT_NEAR(scaled[i].item<double>(), static_cast<double>(expected), 1e-15 * static_cast<double>(theta)) << i;
  }
  EXPECT_GT(kept, 0);
  EXPECT_GT(divided, 0);
  EXPECT_GT(blended, 0);
}

TEST(RopeTest, decode_loops_equal_the_aten_ops) {
  // One or a few positions without autograd take loops for the tables and the rotation; with autograd
  // recording (or many positions), the ATen ops. Same values: tables within an ulp of fp64 cos/sin cast,
  // rotations rounded step by step as the ATen ops round them.
  auto inv_freq = rope_inv_freq(48, 10000.0);  // 48 rotary dims of 64: the last 16 pass through
  for (auto dtype : {at::kFloat, at::kBFloat16}) {
    auto positions = at::tensor(std::vector<int64_t>{131071}, at::kLong);
    auto [cos, sin] = rope_cos_sin(positions, inv_freq, dtype);
    auto angles = positions.to(at::kDouble).unsqueeze(-1) * inv_freq;
    EXPECT_EQ(cos.scalar_type(), dtype);
    EXPECT_TRUE(at::allclose(cos.to(at::kDouble), angles.cos().to(dtype).to(at::kDouble), 0, 1e-7));
    EXPECT_TRUE(at::allclose(sin.to(at::kDouble), angles.sin().to(dtype).to(at::kDouble), 0, 1e-7));
    for (bool batched : {false, true}) {
      auto c = batched ? cos.unsqueeze(0).expand({2, 1, 24}) : cos;
      auto s = batched ? sin.unsqueeze(0).expand({2, 1, 24}) : sin;
      auto x = at::randn({2, 5, 1, 64}).to(dtype);
      at::Tensor loop;
      {
        at::NoGradGuard no_grad;
        loop = apply_rope(x, c, s);
      }
      auto aten = apply_rope(x.clone().requires_grad_(true), c, s).detach();
      EXPECT_EQ(loop.scalar_type(), dtype);
      EXPECT_TRUE(at::allclose(loop.to(at::kDouble), aten.to(at::kDouble), 1e-6, 1e-7))
          << c10::toString(dtype) << (batched ? " batched tables" : "");
      EXPECT_TRUE(at::equal(loop.narrow(-1, 48, 16), x.narrow(-1, 48, 16)));
    }
  }
}

TEST(RopeTest, bad_inputs_are_rejected_with_input_errors) {
  auto expect_input_error = [](const std::function<void()>& call) {
    try {
      call();
      ADD_FAILURE() << "no error thrown";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::BadInput) << e.what();
    }
  };
  RopeScaling yarn;
  yarn.type = "yarn";
  RopeScaling zero_factor;
  zero_factor.type = "linear";
  zero_factor.factor = 0.0;
  expect_input_error([] { rope_inv_freq(7, 10000.0); });
  expect_input_error([] { rope_inv_freq(8, 0.5); });
  expect_input_error([&] { rope_inv_freq(8, 10000.0, yarn); });
  expect_input_error([&] { rope_inv_freq(8, 10000.0, zero_factor); });
  expect_input_error([] { rope_cos_sin(at::zeros({4}), rope_inv_freq(8, 1e4), at::kFloat); });  // float positions
  // Not a structured binding: C++17 lambdas cannot capture those (clang rejects it).
  const auto cos_sin = rope_cos_sin(at::arange(5, at::kLong), rope_inv_freq(8, 1e4), at::kFloat);
  const at::Tensor& cos = std::get<0>(cos_sin);
  const at::Tensor& sin = std::get<1>(cos_sin);
  expect_input_error([&] { apply_rope(at::randn({1, 1, 4, 8}), cos, sin); });  // 5 positions, 4 tokens
  expect_input_error([&] { apply_rope(at::randn({1, 1, 5, 6}), cos, sin); });  // rotary dim 8 > head dim 6
}

}  // namespace
}  // namespace swarmt::ops
