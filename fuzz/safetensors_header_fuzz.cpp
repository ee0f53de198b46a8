// Fuzzes the safetensors header parser: the bytes are a whole .safetensors file (8-byte length, JSON
// header, data section). For accepted files it checks what the readers rely on: every tensor's bytes lie
// inside the file (they are read here, so AddressSanitizer catches any range past the input), offsets
// tile the data section, and byte counts match shape x dtype size.
#include <map>
#include <vector>

#include "fuzz_harness.h"
#include "swarmt/core/safetensors.h"

namespace swarmt::fuzz {

void fuzz_one(const uint8_t* data, size_t size) {
  const SafetensorsHeader header = parse_safetensors_header(data, size, kFuzzSource);
  FUZZ_REQUIRE(header.data_start == 8 + header.header_bytes, "data section starts after the header");
  FUZZ_REQUIRE(header.data_start + header.data_bytes == size, "data section ends at the end of the file");
  FUZZ_REQUIRE(header.index.size() == header.tensors.size(), "tensor names are unique");
  uint64_t cursor = 0;
  uint8_t checksum = 0;
  for (const TensorEntry& t : header.tensors) {
    FUZZ_REQUIRE(t.begin == cursor, "tensors tile the data section in order: " + t.name);
    uint64_t expected = dtype_size(t.dtype);
    for (int64_t d : t.shape) {
      FUZZ_REQUIRE(d >= 0, "dimensions are non-negative: " + t.name);
      expected *= static_cast<uint64_t>(d);
    }
    FUZZ_REQUIRE(t.nbytes() == expected, "byte count equals numel x dtype size: " + t.name);
    FUZZ_REQUIRE(header.find(t.name) == &t, "index finds the entry: " + t.name);
    const uint8_t* bytes = data + header.data_start + t.begin;
    for (uint64_t i = 0; i < t.nbytes(); ++i) checksum ^= bytes[i];
    cursor = t.end;
  }
  FUZZ_REQUIRE(cursor == header.data_bytes, "the last tensor ends at the end of the data section");
  (void)checksum;
}

namespace {

std::string file_bytes(const std::vector<TensorToWrite>& tensors, const std::map<std::string, std::string>& metadata) {
  std::vector<size_t> order;
  std::string out = build_safetensors_header(tensors, metadata, kFuzzSource, &order);  // length + JSON
  for (size_t i : order)
    if (tensors[i].nbytes > 0) out.append(static_cast<const char*>(tensors[i].data), tensors[i].nbytes);
  return out;
}

}  // namespace

void write_seeds(const SeedWriter& seeds) {
  const std::vector<float> f32 = {1.0f, -2.5f, 3.25f, 0.0f, 7.0f, 8.0f};
  const std::vector<uint16_t> bf16 = {0x3f80, 0xc000, 0x4040};
  const std::vector<int64_t> i64 = {1, 2, 3, 4};
  const std::vector<uint8_t> u8 = {1, 0, 1};
  const double scalar = 3.5;
  seeds.add("empty.safetensors", file_bytes({}, {}));
  seeds.add("one_tensor.safetensors", file_bytes({{"weight", DType::F32, {2, 3}, f32.data(), 24}}, {}));
  seeds.add("metadata.safetensors",
            file_bytes({{"w", DType::F32, {6}, f32.data(), 24}}, {{"format", "pt"}, {"note", "seed"}}));
  seeds.add("mixed_dtypes.safetensors",
            file_bytes({{"model.embed_tokens.weight", DType::BF16, {3}, bf16.data(), 6},
                        {"ids", DType::I64, {2, 2}, i64.data(), 32},
                        {"mask", DType::BOOL, {3}, u8.data(), 3},
                        {"scale", DType::F64, {}, &scalar, 8},
                        {"empty", DType::F16, {0, 4}, nullptr, 0}},
                       {{"format", "pt"}}));
}

}  // namespace swarmt::fuzz
