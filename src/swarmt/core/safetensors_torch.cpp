#include "swarmt/core/safetensors_torch.h"

#include <cstring>

#include "swarmt/core/error.h"

namespace swarmt {
namespace {

std::vector<int64_t> to_vector(at::IntArrayRef sizes) { return std::vector<int64_t>(sizes.begin(), sizes.end()); }

// CPU, contiguous, detached versions of the tensors, and their descriptions for the torch-free writer.
// `keep_alive` owns the converted tensors while the writer reads their bytes.
std::vector<TensorToWrite> describe_for_writing(const NamedTensors& tensors, const std::string& destination,
                                                std::vector<at::Tensor>* keep_alive) {
  std::vector<TensorToWrite> out;
  out.reserve(tensors.size());
  keep_alive->reserve(tensors.size());
  for (const auto& [name, tensor] : tensors) {
    const std::string where = str_cat(destination, ": tensor '", name, "'");
    SWARMT_CHECK_INPUT(tensor.defined(), where, ": undefined tensor");
    at::Tensor cpu = tensor.detach().to(at::kCPU).contiguous();
    keep_alive->push_back(cpu);
    TensorToWrite t;
    t.name = name;
    t.dtype = to_dtype(cpu.scalar_type(), where);
    t.shape = to_vector(cpu.sizes());
    t.data = cpu.data_ptr();
    t.nbytes = static_cast<uint64_t>(cpu.numel()) * cpu.element_size();
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace

at::ScalarType to_scalar_type(DType dtype, const std::string& where) {
  switch (dtype) {
    case DType::BOOL: return at::kBool;
    case DType::U8: return at::kByte;
    case DType::I8: return at::kChar;
    case DType::I16: return at::kShort;
    case DType::F16: return at::kHalf;
    case DType::BF16: return at::kBFloat16;
    case DType::I32: return at::kInt;
    case DType::F32: return at::kFloat;
    case DType::I64: return at::kLong;
    case DType::F64: return at::kDouble;
    default: break;
  }
  throw_input_error(where, ": dtype ", dtype_name(dtype), " has no libtorch equivalent in swarmt");
}

DType to_dtype(at::ScalarType type, const std::string& where) {
  switch (type) {
    case at::kBool: return DType::BOOL;
    case at::kByte: return DType::U8;
    case at::kChar: return DType::I8;
    case at::kShort: return DType::I16;
    case at::kHalf: return DType::F16;
    case at::kBFloat16: return DType::BF16;
    case at::kInt: return DType::I32;
    case at::kFloat: return DType::F32;
    case at::kLong: return DType::I64;
    case at::kDouble: return DType::F64;
    default: break;
  }
  throw_input_error(where, ": tensors of type ", c10::toString(type), " cannot be saved as safetensors");
}

at::Tensor tensor_from_entry(const SafetensorsFile& file, const TensorEntry& entry) {
  const std::string where = str_cat(file.path(), ": tensor '", entry.name, "'");
  const at::ScalarType type = to_scalar_type(entry.dtype, where);
  const auto options = at::TensorOptions().dtype(type).device(at::kCPU);
  uint8_t* bytes = file.mapping()->mutable_data() + (file.data(entry) - file.mapping()->data());
  if (entry.dtype == DType::BOOL) {
    // A bool tensor must hold only 0 and 1; the file may hold any byte. Normalise through a copy.
    auto raw = at::from_blob(bytes, entry.shape, at::TensorOptions().dtype(at::kByte));
    return raw.ne(0);
  }
  if (entry.nbytes() == 0) return at::empty(entry.shape, options);
  if (file.is_aligned(entry)) {
    std::shared_ptr<MappedFile> mapping = file.mapping();
    return at::from_blob(bytes, entry.shape, [mapping](void*) mutable { mapping.reset(); }, options);
  }
  // Misaligned (files from old writers): copy through an aligned buffer.
  at::Tensor out = at::empty(entry.shape, options);
  std::memcpy(out.data_ptr(), bytes, entry.nbytes());
  return out;
}

TensorStore TensorStore::open(const std::string& path) {
  TensorStore store;
  store.set_ = SafetensorsSet::open(path);
  return store;
}

at::Tensor TensorStore::get(const std::string& name) const {
  const SafetensorsFile& file = set_.file_of(name);
  return tensor_from_entry(file, file.entry(name));
}

void TensorStore::release(const std::string& name) const {
  const SafetensorsFile& file = set_.file_of(name);
  const TensorEntry& entry = file.entry(name);
  file.mapping()->release_pages(file.data(entry), entry.nbytes());
}

void TensorStore::release_all() const {
  for (const auto& file : set_.files()) file.mapping()->release_pages(file.mapping()->data(), file.mapping()->size());
}

at::Tensor TensorStore::get(const std::string& name, at::IntArrayRef expected_shape) const {
  const TensorEntry& entry = set_.entry(name);
  SWARMT_CHECK_INPUT(entry.shape == to_vector(expected_shape), path(), ": tensor '", name, "' has shape ",
                     shape_to_string(entry.shape), ", expected ", shape_to_string(to_vector(expected_shape)));
  return get(name);
}

std::map<std::string, at::Tensor> load_safetensors(const std::string& path) {
  TensorStore store = TensorStore::open(path);
  std::map<std::string, at::Tensor> out;
  for (const std::string& name : store.names()) out[name] = store.get(name);
  return out;
}

FileDigest save_safetensors(const std::string& path, const NamedTensors& tensors,
                            const std::map<std::string, std::string>& metadata) {
  std::vector<at::Tensor> keep_alive;
  return write_safetensors(path, describe_for_writing(tensors, path, &keep_alive), metadata);
}

std::vector<std::string> save_safetensors_model(const std::string& directory, const NamedTensors& tensors,
                                                const std::map<std::string, std::string>& metadata,
                                                uint64_t max_shard_bytes) {
  std::vector<at::Tensor> keep_alive;
  return write_safetensors_model(directory, describe_for_writing(tensors, directory, &keep_alive), metadata,
                                 max_shard_bytes);
}

}  // namespace swarmt
