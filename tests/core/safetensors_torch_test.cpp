// at::Tensor views of safetensors files, the TensorStore, and saving tensors.
#include "swarmt/core/safetensors_torch.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "swarmt/core/error.h"
#include "test_util.h"
#include "bad_input.h"
#include "core/file_helpers.h"

namespace swarmt {
namespace {

using testing::le64;
using testing::reference_layout;

using testing::error_of;

TEST(SafetensorsTorch, round_trip_of_every_dtype_is_exact) {
  torch::manual_seed(3);
  const std::vector<at::ScalarType> types = {at::kBool, at::kByte,     at::kChar, at::kShort, at::kHalf,
                                             at::kBFloat16, at::kInt, at::kFloat, at::kLong, at::kDouble};
  NamedTensors tensors;
  for (at::ScalarType type : types) {
    at::Tensor t = type == at::kBool ? at::rand({4, 3}).gt(0.5)
                   : at::isFloatingType(type) ? at::randn({4, 3}).to(type)
                                              : at::randint(-100, 100, {4, 3}).to(type);
    if (type == at::kByte) t = at::randint(0, 255, {4, 3}).to(type);
    tensors.push_back({std::string("t_") + c10::toString(type), t});
  }
  tensors.push_back({"scalar", at::scalar_tensor(2.5, at::kFloat)});
  tensors.push_back({"empty", at::empty({0, 5}, at::kBFloat16)});
  tensors.push_back({"transposed", at::arange(6, at::kFloat).view({2, 3}).t()});  // non-contiguous input

  testing::TempDir tmp;
  save_safetensors(tmp.file("all.safetensors"), tensors, {{"format", "pt"}});
  auto loaded = load_safetensors(tmp.file("all.safetensors"));
  ASSERT_EQ(loaded.size(), tensors.size());
  for (const auto& [name, expected] : tensors) {
    SCOPED_TRACE(name);
    const at::Tensor& actual = loaded.at(name);
    EXPECT_EQ(actual.scalar_type(), expected.scalar_type());
    EXPECT_EQ(actual.sizes(), expected.sizes());
    EXPECT_TRUE(at::equal(actual, expected.contiguous()));
  }
}

TEST(SafetensorsTorch, aligned_tensors_are_zero_copy_views_that_outlive_the_store) {
  testing::TempDir tmp;
  save_safetensors(tmp.file("w.safetensors"), {{"w", at::arange(12, at::kFloat).view({3, 4})}});
  at::Tensor view;
  {
    TensorStore store = TensorStore::open(tmp.file("w.safetensors"));
    const SafetensorsFile& file = store.set().file_of("w");
    view = store.get("w");
    const auto* begin = file.mapping()->data();
    const auto* ptr = static_cast<const uint8_t*>(view.data_ptr());
    EXPECT_TRUE(ptr >= begin && ptr < begin + file.mapping()->size()) << "expected a view of the mapping";
  }  // the store and its file object are gone; the view keeps the mapping alive
  EXPECT_EQ(view[2][3].item<float>(), 11.0f);
}

TEST(SafetensorsTorch, writing_into_a_view_never_changes_the_file) {
  testing::TempDir tmp;
  save_safetensors(tmp.file("w.safetensors"), {{"w", at::ones({4})}});
  {
    at::Tensor view = TensorStore::open(tmp.file("w.safetensors")).get("w");
    view.add_(1);  // misuse (callers should clone first), but harmless: the mapping is copy-on-write
    EXPECT_EQ(view[0].item<float>(), 2.0f);
  }
  EXPECT_TRUE(at::equal(TensorStore::open(tmp.file("w.safetensors")).get("w"), at::ones({4})));
}

// Loading gives a tensor's mapped pages back once it is copied (the model's peak memory then excludes
// its file). The pages come back from the file on the next read, so nothing read afterwards changes,
// whether one tensor or the whole store is released, and whatever the page boundaries cut.
TEST(SafetensorsTorch, released_pages_read_back_the_file_contents) {
  testing::TempDir tmp;
  const at::Tensor big = at::randn({3000, 7}), small = at::arange(5, at::kDouble);
  save_safetensors(tmp.file("w.safetensors"), {{"big", big}, {"small", small}});
  TensorStore store = TensorStore::open(tmp.file("w.safetensors"));
  EXPECT_TRUE(at::equal(store.get("big"), big));
  store.release("big");
  EXPECT_TRUE(at::equal(store.get("big"), big));
  EXPECT_TRUE(at::equal(store.get("small"), small));
  store.release_all();
  EXPECT_TRUE(at::equal(store.get("big"), big));
  EXPECT_TRUE(at::equal(store.get("small"), small));
  EXPECT_THROW(store.release("missing"), Error);
}

TEST(SafetensorsTorch, misaligned_tensor_is_copied_with_correct_values) {
  std::string data = "\x01";
  const float v[3] = {1.5f, -2.0f, 4.0f};
  data.append(reinterpret_cast<const char*>(v), sizeof(v));
  testing::TempDir tmp;
  testing::write_file(tmp.file("old.safetensors"),
                      reference_layout(R"({"flag":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},)"
                                       R"("w":{"dtype":"F32","shape":[3],"data_offsets":[1,13]}})",
                                       data));
  TensorStore store = TensorStore::open(tmp.file("old.safetensors"));
  at::Tensor w = store.get("w");
  EXPECT_EQ(reinterpret_cast<uintptr_t>(w.data_ptr()) % 4, 0u);
  EXPECT_TRUE(at::equal(w, at::tensor({1.5f, -2.0f, 4.0f})));
}

TEST(SafetensorsTorch, bool_bytes_other_than_0_and_1_read_as_true) {
  testing::TempDir tmp;
  testing::write_file(tmp.file("mask.safetensors"),
                      reference_layout(R"({"mask":{"dtype":"BOOL","shape":[3],"data_offsets":[0,3]}})",
                                       std::string("\x00\x01\x07", 3)));
  at::Tensor mask = TensorStore::open(tmp.file("mask.safetensors")).get("mask");
  EXPECT_EQ(mask.scalar_type(), at::kBool);
  EXPECT_TRUE(at::equal(mask, at::tensor(std::vector<int64_t>{0, 1, 1}).to(at::kBool)));
}

TEST(SafetensorsTorch, shape_mismatch_names_tensor_shape_and_expectation) {
  testing::TempDir tmp;
  save_safetensors(tmp.file("m.safetensors"), {{"proj.weight", at::zeros({3, 4})}});
  TensorStore store = TensorStore::open(tmp.file("m.safetensors"));
  EXPECT_EQ(store.get("proj.weight", {3, 4}).sizes().vec(), (std::vector<int64_t>{3, 4}));
  const std::string message = error_of([&] { store.get("proj.weight", {4, 3}); });
  EXPECT_NE(message.find("m.safetensors: tensor 'proj.weight' has shape [3, 4], expected [4, 3]"), std::string::npos)
      << message;
  EXPECT_NE(error_of([&] { store.get("missing"); }).find("m.safetensors: no tensor named 'missing'"), std::string::npos);
}

TEST(SafetensorsTorch, sharded_save_loads_back_identically) {
  torch::manual_seed(5);
  NamedTensors tensors;
  for (int i = 0; i < 6; ++i) tensors.push_back({"layers." + std::to_string(i) + ".w", at::randn({8, 8})});  // 256 B each
  testing::TempDir tmp;
  auto files = save_safetensors_model(tmp.file("model"), tensors, {{"format", "pt"}}, /*max_shard_bytes=*/600);
  EXPECT_EQ(files.size(), 3u);
  TensorStore store = TensorStore::open(tmp.file("model"));
  EXPECT_TRUE(store.set().sharded());
  ASSERT_EQ(store.size(), tensors.size());
  for (const auto& [name, expected] : tensors) EXPECT_TRUE(at::equal(store.get(name), expected)) << name;
}

TEST(SafetensorsTorch, unsupported_types_are_input_errors) {
  testing::TempDir tmp;
  EXPECT_NE(error_of([&] { save_safetensors(tmp.file("c.safetensors"), {{"z", at::zeros({2}, at::kComplexFloat)}}); })
                .find("tensor 'z': tensors of type ComplexFloat cannot be saved as safetensors"),
            std::string::npos);
  testing::write_file(tmp.file("u16.safetensors"),
                      reference_layout(R"({"u":{"dtype":"U16","shape":[1],"data_offsets":[0,2]}})", "ab"));
  TensorStore store = TensorStore::open(tmp.file("u16.safetensors"));
  EXPECT_NE(error_of([&] { store.get("u"); }).find("tensor 'u': dtype U16 has no libtorch equivalent"), std::string::npos);
}

TEST(SafetensorsTorch, dtype_mapping_is_a_bijection_on_supported_types) {
  for (DType d : all_dtypes()) {
    at::ScalarType type;
    try {
      type = to_scalar_type(d, "test");
    } catch (const Error&) {
      continue;  // U16/U32/U64/F8: not in every libtorch
    }
    EXPECT_EQ(to_dtype(type, "test"), d) << dtype_name(d);
    EXPECT_EQ(static_cast<size_t>(c10::elementSize(type)), dtype_size(d)) << dtype_name(d);
  }
}

}  // namespace
}  // namespace swarmt
