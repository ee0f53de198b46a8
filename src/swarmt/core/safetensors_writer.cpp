// Writing safetensors files byte-compatible with the reference writer (safetensors/src/tensor.rs,
// prepare() and serialize()).
#include <algorithm>
#include <numeric>
#include <set>

#include "swarmt/core/atomic_file.h"
#include "swarmt/core/error.h"
#include "swarmt/core/json.h"
#include "swarmt/core/safetensors.h"

namespace swarmt {
namespace {

// A JSON string literal; BadInput if `s` is not valid UTF-8 (JSON headers must be).
std::string json_string(const std::string& s, const std::string& destination) {
  try {
    return Json(s).dump();
  } catch (const Json::exception&) {
    throw_input_error(destination, ": tensor name or metadata string is not valid UTF-8: ", Json(s).dump(-1, ' ', false, Json::error_handler_t::replace));
  }
}

void validate(const std::vector<TensorToWrite>& tensors, const std::map<std::string, std::string>& metadata,
              const std::string& destination) {
  std::set<std::string> names;
  for (const TensorToWrite& t : tensors) {
    const std::string where = str_cat(destination, ": tensor '", t.name, "'");
    SWARMT_CHECK_INPUT(!t.name.empty(), destination, ": a tensor has an empty name");
    SWARMT_CHECK_INPUT(t.name != "__metadata__", where, ": this name is reserved for the metadata");
    json_string(t.name, destination);
    SWARMT_CHECK_INPUT(names.insert(t.name).second, where, ": appears twice in the list to write");
    uint64_t bytes = dtype_size(t.dtype);
    for (int64_t d : t.shape) {
      SWARMT_CHECK_INPUT(d >= 0 && static_cast<uint64_t>(d) <= kMaxSafetensorsDim, where, ": invalid dimension ", d,
                         " in shape ", shape_to_string(t.shape));
      SWARMT_CHECK_INPUT(!__builtin_mul_overflow(bytes, static_cast<uint64_t>(d), &bytes), where,
                         ": byte size overflows 64 bits");
    }
    SWARMT_CHECK_INPUT(bytes == t.nbytes, where, ": shape ", shape_to_string(t.shape), " of ", dtype_name(t.dtype),
                       " needs ", bytes, " bytes but ", t.nbytes, " were given");
    SWARMT_CHECK_INPUT(t.data != nullptr || t.nbytes == 0, where, ": no data");
  }
  for (const auto& kv : metadata) {
    json_string(kv.first, destination);
    json_string(kv.second, destination);
  }
}

}  // namespace

std::string build_safetensors_header(const std::vector<TensorToWrite>& tensors,
                                     const std::map<std::string, std::string>& metadata,
                                     const std::string& destination, std::vector<size_t>* order) {
  validate(tensors, metadata, destination);
  // Descending alignment (= element size), then name: every tensor starts at a multiple of its element
  // size once the data section starts 8-byte aligned.
  std::vector<size_t> sorted(tensors.size());
  std::iota(sorted.begin(), sorted.end(), 0);
  std::sort(sorted.begin(), sorted.end(), [&](size_t a, size_t b) {
    size_t sa = dtype_size(tensors[a].dtype), sb = dtype_size(tensors[b].dtype);
    if (sa != sb) return sa > sb;
    return tensors[a].name < tensors[b].name;
  });

  std::string json = "{";
  bool first = true;
  if (!metadata.empty()) {
    json += "\"__metadata__\":{";
    bool first_field = true;
    for (const auto& kv : metadata) {
      if (!first_field) json += ",";
      first_field = false;
      json += json_string(kv.first, destination) + ":" + json_string(kv.second, destination);
    }
    json += "}";
    first = false;
  }
  uint64_t offset = 0;
  for (size_t i : sorted) {
    const TensorToWrite& t = tensors[i];
    if (!first) json += ",";
    first = false;
    json += json_string(t.name, destination) + ":{\"dtype\":\"" + dtype_name(t.dtype) + "\",\"shape\":[";
    for (size_t d = 0; d < t.shape.size(); ++d) json += (d ? "," : "") + std::to_string(t.shape[d]);
    json += "],\"data_offsets\":[" + std::to_string(offset) + "," + std::to_string(offset + t.nbytes) + "]}";
    offset += t.nbytes;
  }
  json += "}";
  json.append((8 - json.size() % 8) % 8, ' ');  // "Force alignment to 8 bytes" (reference writer)

  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((static_cast<uint64_t>(json.size()) >> (8 * i)) & 0xff);
  out += json;
  if (order) *order = std::move(sorted);
  return out;
}

FileDigest write_safetensors(const std::string& path, const std::vector<TensorToWrite>& tensors,
                             const std::map<std::string, std::string>& metadata) {
  std::vector<size_t> order;
  const std::string header = build_safetensors_header(tensors, metadata, path, &order);
  AtomicFileWriter writer(path);
  writer.write(header);
  for (size_t i : order) writer.write(tensors[i].data, tensors[i].nbytes);
  return writer.commit();
}

}  // namespace swarmt
