// Fuzzes sharded model directories: the bytes are model.safetensors.index.json, beside three small valid
// shards, and the directory is opened as a SafetensorsSet. For accepted indexes it checks that every
// tensor name resolves to a shard that holds it and that its bytes lie inside that shard's mapping.
#include <filesystem>
#include <vector>

#include "fuzz_harness.h"
#include "swarmt/core/safetensors_set.h"

namespace fs = std::filesystem;

namespace swarmt::fuzz {
namespace {

const std::vector<float> kValues = {0.5f, 1.5f, -2.0f, 4.0f, 8.0f, -16.0f, 32.0f, 64.0f};
const std::vector<uint16_t> kBf16 = {0x3f80, 0x4000, 0x4040, 0x4080, 0x3f00, 0xbf80, 0x0000, 0x7f80};

// Three shards of at most 40 bytes: [embed], [up_proj, norm], [lm_head].
std::vector<std::string> write_model(const std::string& directory) {
  const std::vector<TensorToWrite> tensors = {
      {"model.embed_tokens.weight", DType::F32, {4, 2}, kValues.data(), 32},
      {"model.layers.0.mlp.up_proj.weight", DType::F32, {2, 4}, kValues.data(), 32},
      {"model.norm.weight", DType::F32, {2}, kValues.data(), 8},
      {"lm_head.weight", DType::BF16, {4, 2}, kBf16.data(), 16},
  };
  return write_safetensors_model(directory, tensors, {{"format", "pt"}}, /*max_shard_bytes=*/40);
}

const std::string& model_dir() {
  static const std::string dir = [] {
    const std::string d = (fs::path(scratch_dir()) / "model").string();
    write_model(d);
    return d;
  }();
  return dir;
}

}  // namespace

void fuzz_one(const uint8_t* data, size_t size) {
  const std::string& dir = model_dir();
  write_file((fs::path(dir) / kShardIndexFile).string(), data, size);
  const SafetensorsSet set = SafetensorsSet::open(dir);
  FUZZ_REQUIRE(set.sharded(), "a directory with an index is read through it");
  const std::vector<std::string> names = set.names();
  FUZZ_REQUIRE(names.size() == set.size(), "names() lists every tensor once");
  for (const std::string& name : names) {
    const SafetensorsFile& file = set.file_of(name);
    FUZZ_REQUIRE(file.has(name), "the shard named for a tensor holds it: " + name);
    const TensorEntry& entry = set.entry(name);
    const uint8_t* begin = file.data(entry);
    const uint8_t* mapping_end = file.mapping()->data() + file.mapping()->size();
    FUZZ_REQUIRE(begin + entry.nbytes() <= mapping_end, "tensor bytes lie inside the shard: " + name);
  }
}

void write_seeds(const SeedWriter& seeds) {
  const std::string dir = (fs::path(scratch_dir()) / "seed-model").string();
  write_model(dir);
  const std::string index = read_file((fs::path(dir) / kShardIndexFile).string());
  seeds.add("index.json", index);
  Json parsed = Json::parse(index);
  parsed["metadata"] = {{"total_size", 88}, {"format", "pt"}};
  seeds.add("index_more_metadata.json", parsed.dump());
  parsed.erase("metadata");
  seeds.add("index_without_metadata.json", parsed.dump());
  parsed["weight_map"].erase("lm_head.weight");
  seeds.add("index_subset.json", parsed.dump(1));
}

}  // namespace swarmt::fuzz
