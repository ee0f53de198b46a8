// The safetensors format: parsing and validating headers, reading files through mmap, writing files
// exactly as the reference (Python/Rust) writer lays them out. Torch-free: the fuzzers link this alone;
// at::Tensor views live in safetensors_torch.h, model directories (shards) in safetensors_set.h.
//
// Layout (huggingface/safetensors README "Format"):
//   [0, 8)        N, unsigned 64-bit little-endian: the header length
//   [8, 8+N)      UTF-8 JSON object: {"__metadata__": {str: str}, name: {"dtype", "shape", "data_offsets"}}
//                 (the reference writer pads it with spaces to a multiple of 8; readers tolerate JSON
//                 whitespace before and after the object)
//   [8+N, EOF)    the data section: every tensor's bytes, little-endian, row-major, back to back; the
//                 offsets [begin, end) are relative to its start and must cover it exactly, no holes.
//
// Every malformed header is rejected with a BadInput error that names the file, the tensor and the
// problem ("model.safetensors: tensor 'w': shape [2, 3] of F32 needs 24 bytes but data_offsets [0, 20]
// span 20").
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "swarmt/core/sha256.h"

namespace swarmt {

// Element types of safetensors files (names as in safetensors/src/tensor.rs). Sub-byte types (F4, F6_*)
// and complex C64 are recognised by name but rejected as unsupported.
enum class DType {
  BOOL, U8, I8, F8_E4M3, F8_E5M2, I16, U16, F16, BF16, I32, U32, F32, I64, U64, F64,
};

const char* dtype_name(DType dtype);           // "F32"
size_t dtype_size(DType dtype);                // bytes per element (also its alignment)
bool parse_dtype(const std::string& name, DType* out);  // false if unknown or unsupported
std::vector<DType> all_dtypes();

// Limits of the reference reader: header size cap, and dimensions are "natural integers no more than
// 48 bits" (docs/safetensors.schema.json).
constexpr uint64_t kMaxSafetensorsHeaderBytes = 100000000;
constexpr uint64_t kMaxSafetensorsDim = uint64_t(1) << 48;

struct TensorEntry {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;  // [] = scalar; a 0 dimension = empty tensor (no bytes)
  uint64_t begin = 0;          // data_offsets, relative to the data section
  uint64_t end = 0;

  uint64_t nbytes() const { return end - begin; }
  int64_t numel() const;
};

// "[2, 3]"
std::string shape_to_string(const std::vector<int64_t>& shape);

struct SafetensorsHeader {
  uint64_t header_bytes = 0;  // N
  uint64_t data_start = 0;    // 8 + N: file offset of the data section
  uint64_t data_bytes = 0;    // size of the data section
  std::vector<TensorEntry> tensors;             // in data order (increasing begin)
  std::map<std::string, std::string> metadata;  // __metadata__, empty if absent
  std::map<std::string, size_t> index;          // name -> position in `tensors`

  const TensorEntry* find(const std::string& name) const;  // nullptr if absent
};

// Parses and validates the first `size` bytes of a safetensors file (the whole file: the data section
// must be exactly covered). `source` names the file in error messages. Never reads outside [data,
// data+size).
SafetensorsHeader parse_safetensors_header(const uint8_t* data, size_t size, const std::string& source);

// Keeps a file mapped in memory for as long as anything (a SafetensorsFile, a tensor view) holds it.
// The mapping is private copy-on-write: the process may write to the pages (an in-place op on a
// zero-copy tensor neither crashes nor reaches the file), but nobody should rely on that.
class MappedFile {
 public:
  static std::shared_ptr<MappedFile> open(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const uint8_t* data() const { return data_; }
  uint8_t* mutable_data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& path() const { return path_; }

  // Gives back the memory of the pages covering [begin, begin + bytes) (MADV_DONTNEED): they stop
  // counting towards the process's resident memory, and a later read maps them from the file again. Only
  // for ranges whose tensors have been copied out: an in-place write through a view is lost.
  void release_pages(const uint8_t* begin, size_t bytes) const;

 private:
  MappedFile() = default;
  std::string path_;
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

// One safetensors file, mapped and validated. Cheap to copy (shares the mapping and the header).
class SafetensorsFile {
 public:
  static SafetensorsFile open(const std::string& path);

  const std::string& path() const { return mapping_->path(); }
  const SafetensorsHeader& header() const { return *header_; }
  const std::vector<TensorEntry>& tensors() const { return header_->tensors; }
  const std::map<std::string, std::string>& metadata() const { return header_->metadata; }

  bool has(const std::string& name) const { return header_->find(name) != nullptr; }
  // BadInput "<file>: no tensor named 'x'" if absent.
  const TensorEntry& entry(const std::string& name) const;

  // The tensor's bytes inside the mapping (entry.nbytes() of them).
  const uint8_t* data(const TensorEntry& entry) const;
  // True if data(entry) is a multiple of the element size, so it can be viewed without copying.
  bool is_aligned(const TensorEntry& entry) const;
  const std::shared_ptr<MappedFile>& mapping() const { return mapping_; }

 private:
  std::shared_ptr<MappedFile> mapping_;
  std::shared_ptr<const SafetensorsHeader> header_;
};

// A tensor to write: its bytes are read from `data` (nbytes must equal numel * dtype_size).
struct TensorToWrite {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  const void* data = nullptr;
  uint64_t nbytes = 0;
};

// The header as the reference writer produces it: tensors ordered by descending dtype alignment, then
// name; JSON `{"__metadata__":{...},"name":{"dtype":"F32","shape":[..],"data_offsets":[b,e]},...}`
// (no __metadata__ if empty), padded with spaces to a multiple of 8 bytes. `order` receives the
// positions of `tensors` in data order. Validates names (non-empty, unique, not "__metadata__"), shapes
// and byte counts; BadInput naming `destination` and the tensor.
std::string build_safetensors_header(const std::vector<TensorToWrite>& tensors,
                                     const std::map<std::string, std::string>& metadata,
                                     const std::string& destination, std::vector<size_t>* order);

// Writes a safetensors file atomically (temporary file + fsync + rename + fsync of the directory) and
// returns its size and SHA-256, computed while writing.
FileDigest write_safetensors(const std::string& path, const std::vector<TensorToWrite>& tensors,
                             const std::map<std::string, std::string>& metadata = {});

}  // namespace swarmt
