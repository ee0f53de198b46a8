// The scan for NaN and ±Inf weights: every floating-point tensor is checked, integer tensors are not,
// and the refusal names the file, the tensor and the count.
#include "swarmt/core/nonfinite.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "bad_input.h"
#include "test_util.h"

namespace swarmt {
namespace {

TEST(NonFinite, every_float_tensor_holding_nan_or_inf_is_found) {
  testing::TempDir tmp;
  at::Tensor with_nan = at::zeros({4, 3});
  with_nan[1][2] = NAN;
  with_nan[3][0] = NAN;
  at::Tensor with_inf = at::ones({5}, at::kBFloat16);
  with_inf[4] = std::numeric_limits<float>::infinity();
  save_safetensors(tmp.file("m.safetensors"), {{"b.weight", with_nan},
                                               {"a.inf", with_inf},
                                               {"c.finite", at::ones({2, 2}, at::kDouble)},
                                               {"d.ids", at::arange(6, at::kLong)}});
  const TensorStore store = TensorStore::open(tmp.file("m.safetensors"));
  const auto found = find_nonfinite_tensors(store);
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].name, "a.inf");
  EXPECT_EQ(found[0].bad_values, 1);
  EXPECT_EQ(found[1].name, "b.weight");
  EXPECT_EQ(found[1].bad_values, 2);
  EXPECT_EQ(found[1].numel, 12);
  EXPECT_EQ(testing::bad_input_message([&] { check_weights_finite(store); }),
            tmp.file("m.safetensors") + ": tensor 'a.inf' holds 1 NaN or infinite values (of 5), and 1 more tensors do "
                                        "too; the weights are broken (pass --allow-nonfinite to load them anyway)");
}

TEST(NonFinite, finite_weights_pass) {
  testing::TempDir tmp;
  save_safetensors(tmp.file("m.safetensors"), {{"w", at::randn({64, 64})}, {"h", at::randn({8}).to(at::kHalf)}});
  const TensorStore store = TensorStore::open(tmp.file("m.safetensors"));
  EXPECT_TRUE(find_nonfinite_tensors(store).empty());
  EXPECT_NO_THROW(check_weights_finite(store));
}

}  // namespace
}  // namespace swarmt
