// Model directories: single file or shards + index, both ways.
#include "swarmt/core/safetensors_set.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "swarmt/core/error.h"
#include "swarmt/core/json.h"
#include "test_util.h"
#include "core/file_helpers.h"

namespace fs = std::filesystem;

namespace swarmt {
namespace {

using testing::entries_of;

// Five F32 tensors of 40 bytes each (10 floats, value = 100 * index + position).
struct FiveTensors {
  std::vector<std::vector<float>> values;
  std::vector<TensorToWrite> tensors;
  FiveTensors() {
    for (int t = 0; t < 5; ++t) {
      std::vector<float> v(10);
      for (int i = 0; i < 10; ++i) v[i] = 100.0f * t + i;
      values.push_back(v);
    }
    for (int t = 0; t < 5; ++t)
      tensors.push_back({"layer" + std::to_string(t) + ".weight", DType::F32, {2, 5}, values[t].data(), 40});
  }
};

std::string error_of(const std::string& path) {
  try {
    SafetensorsSet::open(path);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput);
    return e.what();
  }
  return "(accepted)";
}

TEST(SafetensorsSet, shard_names_follow_the_hub_pattern) {
  EXPECT_EQ(shard_file_name(0, 2), "model-00001-of-00002.safetensors");
  EXPECT_EQ(shard_file_name(11, 12), "model-00012-of-00012.safetensors");
}

TEST(SafetensorsSet, small_model_is_one_file_without_index) {
  FiveTensors five;
  testing::TempDir tmp;
  auto files = write_safetensors_model(tmp.path(), five.tensors, {{"format", "pt"}});
  EXPECT_EQ(files, std::vector<std::string>{"model.safetensors"});
  EXPECT_EQ(entries_of(tmp.path()), std::vector<std::string>{"model.safetensors"});
  SafetensorsSet set = SafetensorsSet::open(tmp.path());
  EXPECT_FALSE(set.sharded());
  EXPECT_EQ(set.size(), 5u);
  EXPECT_EQ(set.metadata().at("format"), "pt");
}

TEST(SafetensorsSet, shards_split_at_the_size_limit_and_resolve_every_name) {
  FiveTensors five;
  testing::TempDir tmp;
  auto files = write_safetensors_model(tmp.path(), five.tensors, {}, /*max_shard_bytes=*/100);
  // 40 + 40 fits in 100, a third would not: [0, 1], [2, 3], [4].
  ASSERT_EQ(files.size(), 3u);
  EXPECT_EQ(files[2], "model-00003-of-00003.safetensors");

  const Json index = read_json_file(tmp.file("model.safetensors.index.json"));
  EXPECT_EQ(index["metadata"]["total_size"].get<uint64_t>(), 200u);
  EXPECT_EQ(index["weight_map"]["layer3.weight"].get<std::string>(), "model-00002-of-00003.safetensors");

  SafetensorsSet set = SafetensorsSet::open(tmp.path());
  EXPECT_TRUE(set.sharded());
  ASSERT_EQ(set.size(), 5u);
  for (int t = 0; t < 5; ++t) {
    const std::string name = "layer" + std::to_string(t) + ".weight";
    const SafetensorsFile& file = set.file_of(name);
    EXPECT_EQ(fs::path(file.path()).filename().string(), shard_file_name(t / 2, 3)) << name;
    float first;
    std::memcpy(&first, file.data(file.entry(name)), 4);
    EXPECT_EQ(first, 100.0f * t);
  }
  // The index file itself also opens the set.
  EXPECT_EQ(SafetensorsSet::open(tmp.file("model.safetensors.index.json")).size(), 5u);
}

TEST(SafetensorsSet, tensor_larger_than_the_limit_gets_its_own_shard) {
  FiveTensors five;
  testing::TempDir tmp;
  auto files = write_safetensors_model(tmp.path(), five.tensors, {}, /*max_shard_bytes=*/10);
  EXPECT_EQ(files.size(), 5u);
  EXPECT_EQ(SafetensorsSet::open(tmp.path()).size(), 5u);
}

TEST(SafetensorsSet, rewriting_with_another_layout_leaves_no_stale_files) {
  FiveTensors five;
  testing::TempDir tmp;
  write_safetensors_model(tmp.path(), five.tensors, {}, 100);  // 3 shards
  write_safetensors_model(tmp.path(), five.tensors, {}, 200);  // 1 file
  EXPECT_EQ(entries_of(tmp.path()), std::vector<std::string>{"model.safetensors"});
  write_safetensors_model(tmp.path(), five.tensors, {}, 150);  // 2 shards
  EXPECT_EQ(entries_of(tmp.path()),
            (std::vector<std::string>{"model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors",
                                      "model.safetensors.index.json"}));
  EXPECT_EQ(SafetensorsSet::open(tmp.path()).size(), 5u);
}

TEST(SafetensorsSet, single_file_path_opens_that_file) {
  FiveTensors five;
  testing::TempDir tmp;
  write_safetensors(tmp.file("adapter.safetensors"), {five.tensors[0]});
  SafetensorsSet set = SafetensorsSet::open(tmp.file("adapter.safetensors"));
  EXPECT_EQ(set.names(), std::vector<std::string>{"layer0.weight"});
}

TEST(SafetensorsSet, index_metadata_is_read_leniently) {
  FiveTensors five;
  testing::TempDir tmp;
  write_safetensors(tmp.file("a.safetensors"), {five.tensors[0]});
  testing::write_file(tmp.file("model.safetensors.index.json"),
                      R"({"metadata": {"total_size": "lots", "format": "pt", "total_parameters": 10},
                          "weight_map": {"layer0.weight": "a.safetensors"}})");
  SafetensorsSet set = SafetensorsSet::open(tmp.path());
  EXPECT_EQ(set.index_metadata()["format"], "pt");
  EXPECT_EQ(set.size(), 1u);
}

TEST(SafetensorsSet, index_naming_a_missing_shard_is_rejected) {
  FiveTensors five;
  testing::TempDir tmp;
  write_safetensors_model(tmp.path(), five.tensors, {}, 100);
  fs::remove(tmp.file("model-00002-of-00003.safetensors"));
  EXPECT_NE(error_of(tmp.path()).find("model.safetensors.index.json: shard 'model-00002-of-00003.safetensors' (named for "
                                      "tensor 'layer2.weight') does not exist"),
            std::string::npos)
      << error_of(tmp.path());
}

TEST(SafetensorsSet, index_naming_a_tensor_its_shard_lacks_is_rejected) {
  FiveTensors five;
  testing::TempDir tmp;
  write_safetensors(tmp.file("a.safetensors"), {five.tensors[0]});
  testing::write_file(tmp.file("model.safetensors.index.json"),
                      R"({"weight_map": {"layer0.weight": "a.safetensors", "lm_head.weight": "a.safetensors"}})");
  EXPECT_NE(error_of(tmp.path()).find("weight_map puts tensor 'lm_head.weight' in shard 'a.safetensors', but that shard "
                                      "has no tensor of that name"),
            std::string::npos)
      << error_of(tmp.path());
}

TEST(SafetensorsSet, tensor_present_in_two_shards_is_rejected) {
  FiveTensors five;
  testing::TempDir tmp;
  write_safetensors(tmp.file("a.safetensors"), {five.tensors[0], five.tensors[1]});
  write_safetensors(tmp.file("b.safetensors"), {five.tensors[1], five.tensors[2]});
  testing::write_file(tmp.file("model.safetensors.index.json"),
                      R"({"weight_map": {"layer0.weight": "a.safetensors", "layer1.weight": "a.safetensors",
                                         "layer2.weight": "b.safetensors"}})");
  const std::string message = error_of(tmp.path());
  EXPECT_NE(message.find("tensor 'layer1.weight' is present in two shards"), std::string::npos) << message;
  EXPECT_NE(message.find("a.safetensors and "), std::string::npos) << message;
}

TEST(SafetensorsSet, shard_name_leaving_the_directory_is_rejected) {
  testing::TempDir tmp;
  fs::create_directory(tmp.file("model"));
  testing::write_file(tmp.file("model/model.safetensors.index.json"),
                      R"({"weight_map": {"w": "../elsewhere.safetensors"}})");
  EXPECT_NE(error_of(tmp.file("model")).find("names shard \"../elsewhere.safetensors\", which is not a plain file name"),
            std::string::npos);
}

TEST(SafetensorsSet, malformed_index_is_rejected_naming_the_field) {
  testing::TempDir tmp;
  testing::write_file(tmp.file("model.safetensors.index.json"), R"({"metadata": {}})");
  EXPECT_NE(error_of(tmp.path()).find("model.safetensors.index.json: field 'weight_map' is missing"), std::string::npos);
  testing::write_file(tmp.file("model.safetensors.index.json"), R"({"weight_map": {"w": 3}})");
  EXPECT_NE(error_of(tmp.path()).find("field 'weight_map.w' must be a string"), std::string::npos) << error_of(tmp.path());
  testing::write_file(tmp.file("model.safetensors.index.json"), R"({"weight_map": {}})");
  EXPECT_NE(error_of(tmp.path()).find("weight_map is empty"), std::string::npos);
  testing::write_file(tmp.file("model.safetensors.index.json"), "{\"weight_map\": ");
  EXPECT_NE(error_of(tmp.path()).find("model.safetensors.index.json: not valid JSON"), std::string::npos);
}

TEST(SafetensorsSet, directory_without_weights_is_rejected) {
  testing::TempDir tmp;
  EXPECT_NE(error_of(tmp.path()).find("neither model.safetensors nor model.safetensors.index.json found"), std::string::npos);
  EXPECT_NE(error_of(tmp.file("nothing_here")).find("nothing_here: no such file or directory"), std::string::npos);
}

TEST(SafetensorsSet, missing_tensor_is_reported_with_the_path) {
  FiveTensors five;
  testing::TempDir tmp;
  write_safetensors_model(tmp.path(), five.tensors, {}, 100);
  SafetensorsSet set = SafetensorsSet::open(tmp.path());
  try {
    set.file_of("lm_head.weight");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(": no tensor named 'lm_head.weight'"), std::string::npos);
  }
}

}  // namespace
}  // namespace swarmt
