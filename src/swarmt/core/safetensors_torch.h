// safetensors <-> at::Tensor: zero-copy views of mapped files, a name -> tensor store over a model
// directory, and saving tensors of any supported dtype.
//
// Views: a tensor returned by tensor_from_entry / TensorStore::get points into the file's memory mapping
// when the bytes are aligned to the element size (the reference writer guarantees that), and owns a
// reference to the mapping, so it stays valid after the file object is gone. Treat such tensors as
// read-only: clone() before modifying them in place (the mapping is private copy-on-write, so an in-place
// write neither crashes nor changes the file, but it silently costs memory and shares state with every
// other view of the same tensor). Misaligned data (files from old writers) is copied instead.
#pragma once

#include <ATen/ATen.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "swarmt/core/safetensors.h"
#include "swarmt/core/safetensors_set.h"

namespace swarmt {

// DType <-> at::ScalarType. BadInput for dtypes libtorch cannot hold in every supported version
// (U16, U32, U64 and the F8 types exist only in recent libtorch 2.x); `where` prefixes the message.
at::ScalarType to_scalar_type(DType dtype, const std::string& where);
DType to_dtype(at::ScalarType type, const std::string& where);

// CPU tensor of `entry` (shape entry.shape, dtype to_scalar_type(entry.dtype)); zero-copy if aligned.
at::Tensor tensor_from_entry(const SafetensorsFile& file, const TensorEntry& entry);

// Every tensor of a model: one .safetensors file, a model directory, or a sharded one (see
// SafetensorsSet::open for the accepted paths and the checks made).
class TensorStore {
 public:
  static TensorStore open(const std::string& path);

  const std::string& path() const { return set_.path(); }
  bool has(const std::string& name) const { return set_.has(name); }
  std::vector<std::string> names() const { return set_.names(); }
  size_t size() const { return set_.size(); }
  const SafetensorsSet& set() const { return set_; }

  // BadInput "<path>: no tensor named 'x'" if absent.
  at::Tensor get(const std::string& name) const;
  // Also checks the shape: BadInput "<path>: tensor 'x' has shape [3, 4], expected [4, 3]".
  at::Tensor get(const std::string& name, at::IntArrayRef expected_shape) const;

  // Loading a model reads each stored tensor once and copies it (converting its dtype); these give the
  // mapped pages back once read, so a model's peak memory does not include its file (MappedFile).
  // Tensors returned by get() before the call must not be used afterwards.
  void release(const std::string& name) const;
  void release_all() const;

 private:
  SafetensorsSet set_;
};

// All tensors of a file, directory or shards, by name (views, as above).
std::map<std::string, at::Tensor> load_safetensors(const std::string& path);

using NamedTensors = std::vector<std::pair<std::string, at::Tensor>>;

// Saves tensors (any device, any layout: they are moved to CPU and made contiguous) into one file,
// atomically. Tensors that need grad are detached. Returns the file's size and SHA-256.
FileDigest save_safetensors(const std::string& path, const NamedTensors& tensors,
                            const std::map<std::string, std::string>& metadata = {});

// Saves into a model directory: model.safetensors or shards + index (see write_safetensors_model).
std::vector<std::string> save_safetensors_model(const std::string& directory, const NamedTensors& tensors,
                                                const std::map<std::string, std::string>& metadata = {},
                                                uint64_t max_shard_bytes = kDefaultMaxShardBytes);

}  // namespace swarmt
