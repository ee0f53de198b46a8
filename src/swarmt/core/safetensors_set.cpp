#include "swarmt/core/safetensors_set.h"

#include <cstdio>
#include <filesystem>
#include <regex>
#include <set>

#include "swarmt/core/atomic_file.h"
#include "swarmt/core/error.h"

namespace fs = std::filesystem;

namespace swarmt {
namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool is_shard_file_name(const std::string& name) {
  static const std::regex pattern("model-[0-9]{5}-of-[0-9]{5}\\.safetensors");
  return std::regex_match(name, pattern);
}

// A shard must be a plain file name inside the model directory: an index must not be able to make us
// open "../../somewhere" or an absolute path.
void check_plain_file_name(const std::string& shard, const std::string& index_path, const std::string& tensor) {
  const bool plain = !shard.empty() && shard != "." && shard != ".." && shard.find('/') == std::string::npos &&
                     shard.find('\\') == std::string::npos && shard.find('\0') == std::string::npos;
  SWARMT_CHECK_INPUT(plain, index_path, ": weight_map entry for tensor '", tensor, "' names shard \"", shard,
                     "\", which is not a plain file name inside the model directory");
}

}  // namespace

std::string shard_file_name(size_t index, size_t count) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "model-%05zu-of-%05zu.safetensors", index + 1, count);
  return buffer;
}

SafetensorsSet SafetensorsSet::open(const std::string& path) {
  SafetensorsSet set;
  set.path_ = path;
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  SWARMT_CHECK_INPUT(fs::exists(status), path, ": no such file or directory");

  std::string single_file;
  if (fs::is_directory(status)) {
    const std::string index = (fs::path(path) / kShardIndexFile).string();
    const std::string single = (fs::path(path) / kSingleModelFile).string();
    if (fs::exists(index, ec)) {
      set.index_path_ = index;
    } else if (fs::exists(single, ec)) {
      single_file = single;
    } else {
      throw_input_error(path, ": neither ", kSingleModelFile, " nor ", kShardIndexFile, " found in this directory");
    }
  } else if (ends_with(path, ".index.json")) {
    set.index_path_ = path;
  } else {
    single_file = path;
  }

  if (!single_file.empty()) {
    set.files_.push_back(SafetensorsFile::open(single_file));
    for (const TensorEntry& e : set.files_[0].tensors()) set.file_of_[e.name] = 0;
    return set;
  }

  // Sharded: the index maps every tensor to its shard; "metadata" is free-form (total_size and more).
  const Json root = read_json_file(set.index_path_);
  const JsonView index(root, set.index_path_);
  if (root.contains("metadata") && root["metadata"].is_object()) set.index_metadata_ = root["metadata"];
  const JsonView weight_map = index.object("weight_map");
  SWARMT_CHECK_INPUT(!weight_map.json().empty(), set.index_path_, ": weight_map is empty (no tensors)");

  const fs::path directory = fs::path(set.index_path_).parent_path();
  std::map<std::string, size_t> position_of_shard;
  std::map<std::string, std::string> shard_of_tensor;  // from the index
  for (auto it = weight_map.json().begin(); it != weight_map.json().end(); ++it) {
    const std::string shard = weight_map.get_string(it.key());
    check_plain_file_name(shard, set.index_path_, it.key());
    shard_of_tensor[it.key()] = shard;
    if (position_of_shard.count(shard)) continue;
    const std::string shard_path = (directory / shard).string();
    SWARMT_CHECK_INPUT(fs::exists(shard_path, ec), set.index_path_, ": shard '", shard, "' (named for tensor '", it.key(),
                       "') does not exist");
    position_of_shard[shard] = set.files_.size();
    set.files_.push_back(SafetensorsFile::open(shard_path));
  }
  for (size_t f = 0; f < set.files_.size(); ++f) {
    for (const TensorEntry& e : set.files_[f].tensors()) {
      auto [it, inserted] = set.file_of_.emplace(e.name, f);
      SWARMT_CHECK_INPUT(inserted, set.index_path_, ": tensor '", e.name, "' is present in two shards: ",
                         set.files_[it->second].path(), " and ", set.files_[f].path());
    }
  }
  for (const auto& [tensor, shard] : shard_of_tensor) {
    const SafetensorsFile& file = set.files_[position_of_shard.at(shard)];
    SWARMT_CHECK_INPUT(file.has(tensor), set.index_path_, ": weight_map puts tensor '", tensor, "' in shard '", shard,
                       "', but that shard has no tensor of that name");
  }
  return set;
}

std::vector<std::string> SafetensorsSet::names() const {
  std::vector<std::string> out;
  out.reserve(file_of_.size());
  for (const auto& kv : file_of_) out.push_back(kv.first);
  return out;
}

const SafetensorsFile& SafetensorsSet::file_of(const std::string& name) const {
  auto it = file_of_.find(name);
  SWARMT_CHECK_INPUT(it != file_of_.end(), path_, ": no tensor named '", name, "'");
  return files_[it->second];
}

const std::map<std::string, std::string>& SafetensorsSet::metadata() const {
  static const std::map<std::string, std::string> kEmpty;
  return files_.empty() ? kEmpty : files_[0].metadata();
}

std::vector<std::string> write_safetensors_model(const std::string& directory, const std::vector<TensorToWrite>& tensors,
                                                 const std::map<std::string, std::string>& metadata,
                                                 uint64_t max_shard_bytes) {
  SWARMT_CHECK_INPUT(max_shard_bytes > 0, directory, ": the maximum shard size must be positive");
  std::error_code ec;
  fs::create_directories(directory, ec);
  SWARMT_CHECK_INPUT(fs::is_directory(directory, ec), directory, ": cannot create the model directory");

  // Greedy assignment in the given order (huggingface_hub split_state_dict_into_shards_factory).
  std::vector<std::vector<TensorToWrite>> shards;
  uint64_t current_bytes = 0, total_bytes = 0;
  for (const TensorToWrite& t : tensors) {
    if (shards.empty() || (current_bytes + t.nbytes > max_shard_bytes && current_bytes > 0)) {
      shards.emplace_back();
      current_bytes = 0;
    }
    shards.back().push_back(t);
    current_bytes += t.nbytes;
    total_bytes += t.nbytes;
  }
  if (shards.empty()) shards.emplace_back();  // no tensors: an empty model.safetensors

  const fs::path dir(directory);
  std::vector<std::string> written;
  if (shards.size() == 1) {
    write_safetensors((dir / kSingleModelFile).string(), shards[0], metadata);
    written.push_back(kSingleModelFile);
  } else {
    Json weight_map = Json::object();
    for (size_t s = 0; s < shards.size(); ++s) {
      const std::string name = shard_file_name(s, shards.size());
      write_safetensors((dir / name).string(), shards[s], metadata);
      written.push_back(name);
      for (const TensorToWrite& t : shards[s]) weight_map[t.name] = name;
    }
    Json index = {{"metadata", {{"total_size", total_bytes}}}, {"weight_map", weight_map}};
    write_file_atomically((dir / kShardIndexFile).string(), index.dump(2) + "\n");
  }

  // Remove what a previous save left behind. Removing an old index is what switches readers to the new
  // single file, so it goes first; shards no index names any more are garbage after that.
  const std::set<std::string> keep(written.begin(), written.end());
  if (shards.size() == 1) fs::remove(dir / kShardIndexFile, ec);
  std::vector<fs::path> stale;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    const bool stale_shard = is_shard_file_name(name) && !keep.count(name);
    const bool superseded_single = shards.size() > 1 && name == kSingleModelFile;
    if (stale_shard || superseded_single) stale.push_back(entry.path());
  }
  for (const fs::path& p : stale) fs::remove(p, ec);
  fsync_path(directory);
  return written;
}

}  // namespace swarmt
