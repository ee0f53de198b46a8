// The tensors of a model wherever they live: a single .safetensors file, a model directory with
// `model.safetensors`, or a sharded directory (`model-0000i-of-0000N.safetensors` files named by
// `model.safetensors.index.json`). Readers see one name -> tensor map; writers choose the layout from a
// maximum shard size exactly as Hugging Face does (huggingface_hub serialization/_base.py).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "swarmt/core/json.h"
#include "swarmt/core/safetensors.h"

namespace swarmt {

constexpr const char* kSingleModelFile = "model.safetensors";
constexpr const char* kShardIndexFile = "model.safetensors.index.json";
constexpr uint64_t kDefaultMaxShardBytes = 5000000000;  // huggingface_hub MAX_SHARD_SIZE

// "model-00001-of-00003.safetensors" for index 0 of 3.
std::string shard_file_name(size_t index, size_t count);

class SafetensorsSet {
 public:
  // `path` is a .safetensors file, a model directory, or a model.safetensors.index.json. A directory
  // with an index is read through the index (even if a model.safetensors is also there). BadInput for:
  // nothing to read, an index that is not valid, naming a missing shard or a tensor its shard lacks, a
  // shard name that leaves the directory, and a tensor present in two shards.
  static SafetensorsSet open(const std::string& path);

  const std::string& path() const { return path_; }
  bool sharded() const { return !index_path_.empty(); }
  const std::string& index_path() const { return index_path_; }  // "" if not sharded

  const std::vector<SafetensorsFile>& files() const { return files_; }
  std::vector<std::string> names() const;  // sorted
  size_t size() const { return file_of_.size(); }
  bool has(const std::string& name) const { return file_of_.count(name) > 0; }

  // The file holding `name` and its entry; BadInput "<path>: no tensor named 'x'" if absent.
  const SafetensorsFile& file_of(const std::string& name) const;
  const TensorEntry& entry(const std::string& name) const { return file_of(name).entry(name); }

  // __metadata__ of the (first) file; the index's "metadata" object (lenient: anything) if sharded.
  const std::map<std::string, std::string>& metadata() const;
  const Json& index_metadata() const { return index_metadata_; }

 private:
  std::string path_;
  std::string index_path_;
  std::vector<SafetensorsFile> files_;
  std::map<std::string, size_t> file_of_;  // tensor name -> position in files_
  Json index_metadata_ = Json::object();
};

// Writes `tensors` into `directory` (created if needed) as `model.safetensors` if they fit in one shard of
// `max_shard_bytes`, else as shards + index (`{"metadata": {"total_size": <tensor bytes>}, "weight_map":
// {...}}`). Tensors are assigned to shards greedily in the given order; a tensor larger than the limit
// gets a shard of its own. Every file is written atomically, the index last; files of a previous layout
// (an old index, old shards, a model.safetensors superseded by an index) are removed afterwards, so the
// directory is readable and consistent at every moment. Returns the files written (names, in order).
// For all-or-nothing replacement of a whole model directory, write into an AtomicDirectory.
std::vector<std::string> write_safetensors_model(const std::string& directory, const std::vector<TensorToWrite>& tensors,
                                                 const std::map<std::string, std::string>& metadata = {},
                                                 uint64_t max_shard_bytes = kDefaultMaxShardBytes);

}  // namespace swarmt
