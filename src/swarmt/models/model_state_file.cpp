#include "swarmt/models/model_state_file.h"

#include <cstdio>
#include <set>

#include "swarmt/core/error.h"
#include "swarmt/core/safetensors_torch.h"
#include "swarmt/models/model_io.h"

namespace swarmt::models {
namespace {

constexpr const char* kStateFormat = "swarmt-state";
constexpr const char* kStateVersion = "1";
constexpr const char* kIntPrefix = "int:";
constexpr const char* kUserPrefix = "user.";

// The checksum of a state file: metadata (without "sha256") as sorted lines, then the tensors by name.
std::string state_checksum(const std::map<std::string, std::string>& metadata,
                           const std::map<std::string, at::Tensor>& tensors) {
  Sha256 hash;
  for (const auto& [key, value] : metadata) {
    if (key == "sha256") continue;
    hash.update(str_cat(key.size(), ":", key, "=", value.size(), ":", value, "\n"));
  }
  for (const auto& [name, tensor] : tensors) {
    const at::Tensor t = tensor.cpu().contiguous();
    hash.update(str_cat(name, "|", c10::toString(t.scalar_type()), "|", t.sizes(), "\n"));
    hash.update(t.data_ptr(), static_cast<size_t>(t.numel()) * t.element_size());
  }
  return to_hex(hash.finish());
}

// Collects every field of a state for writing.
class StateFieldsWriter : public nn::StateFields {
 public:
  void tensor(const std::string& name, at::Tensor& value, int64_t) override {
    if (!value.defined()) return;  // an optional part the model does not use (no short convolution)
    SWARMT_CHECK(tensors_.count(name) == 0, "state field '", name, "' named twice");
    tensors_[name] = value.detach().cpu().contiguous();
  }
  // Fixed width ("+0000000000000000042"), so that a file's size never depends on the numbers in it.
  void integer(const std::string& name, int64_t& value) override {
    char text[32];
    std::snprintf(text, sizeof(text), "%+020lld", static_cast<long long>(value));
    integers_[kIntPrefix + name] = text;
  }
  bool loading() const override { return false; }
  std::string where() const override { return "saving a state"; }

  std::map<std::string, at::Tensor> tensors_;
  std::map<std::string, std::string> integers_;
};

// Assigns every field of a fresh state from a file, checking it against the fresh one.
class StateFieldsReader : public nn::StateFields {
 public:
  StateFieldsReader(std::string path, const std::map<std::string, at::Tensor>& tensors,
                    const std::map<std::string, std::string>& metadata)
      : path_(std::move(path)), tensors_(tensors), metadata_(metadata) {}

  void tensor(const std::string& name, at::Tensor& value, int64_t growable_dim) override {
    auto it = tensors_.find(name);
    if (!value.defined()) {
      SWARMT_CHECK_INPUT(it == tensors_.end(), path_, ": holds tensor '", name, "', which this model's state does not have");
      return;
    }
    SWARMT_CHECK_INPUT(it != tensors_.end(), path_, ": no tensor '", name, "' (the state of this model has one)");
    const at::Tensor& stored = it->second;
    SWARMT_CHECK_INPUT(stored.scalar_type() == value.scalar_type(), path_, ": tensor '", name, "' is ",
                       c10::toString(stored.scalar_type()), ", this model's state holds ", c10::toString(value.scalar_type()),
                       " (was the state saved with another --dtype?)");
    bool shape_ok = stored.dim() == value.dim();
    for (int64_t d = 0; shape_ok && d < value.dim(); ++d) shape_ok = d == growable_dim || stored.size(d) == value.size(d);
    SWARMT_CHECK_INPUT(shape_ok, path_, ": tensor '", name, "' has shape ", stored.sizes(), ", this model's state has ",
                       value.sizes(), growable_dim >= 0 ? str_cat(" (dimension ", growable_dim, " may differ)") : "");
    value = stored.to(value.options(), /*non_blocking=*/false, /*copy=*/true);
    used_tensors_.insert(name);
  }

  void integer(const std::string& name, int64_t& value) override {
    auto it = metadata_.find(kIntPrefix + name);
    SWARMT_CHECK_INPUT(it != metadata_.end(), path_, ": no integer '", name, "' (the state of this model has one)");
    size_t used = 0;
    int64_t parsed = 0;
    try {
      parsed = std::stoll(it->second, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    SWARMT_CHECK_INPUT(used == it->second.size() && used > 0, path_, ": integer '", name, "' is '", it->second,
                       "', not a decimal integer");
    value = parsed;
    used_integers_.insert(it->first);
  }

  bool loading() const override { return true; }
  std::string where() const override { return path_; }

  // Fields of the file that the state did not ask for: a file of another model shape.
  void check_all_used() const {
    for (const auto& [name, t] : tensors_)
      SWARMT_CHECK_INPUT(used_tensors_.count(name), path_, ": tensor '", name, "' is not part of this model's state");
    for (const auto& [key, value] : metadata_)
      if (key.rfind(kIntPrefix, 0) == 0)
        SWARMT_CHECK_INPUT(used_integers_.count(key), path_, ": integer '", key.substr(4),
                           "' is not part of this model's state");
  }

 private:
  std::string path_;
  const std::map<std::string, at::Tensor>& tensors_;
  const std::map<std::string, std::string>& metadata_;
  std::set<std::string> used_tensors_, used_integers_;
};

}  // namespace

std::string model_state_fingerprint(CausalLM& model) {
  return sha256_hex(str_cat(model.config_json().dump(), "\ndtype=", dtype_name(model.dtype()),
                            "\nwindow=", model.inference_window()));
}

FileDigest save_model_state(ModelState& state, CausalLM& model, const std::string& path,
                            const std::map<std::string, std::string>& user_metadata) {
  StateFieldsWriter writer;
  state.fields(writer);
  std::map<std::string, std::string> metadata = writer.integers_;
  metadata["format"] = kStateFormat;
  metadata["version"] = kStateVersion;
  metadata["model"] = model_state_fingerprint(model);
  for (const auto& [key, value] : user_metadata) metadata[kUserPrefix + key] = value;
  metadata["sha256"] = state_checksum(metadata, writer.tensors_);
  NamedTensors tensors(writer.tensors_.begin(), writer.tensors_.end());
  return save_safetensors(path, tensors, metadata);
}

LoadedModelState load_model_state(CausalLM& model, const std::string& path) {
  const TensorStore store = TensorStore::open(path);  // validates the header; names the file
  const auto& metadata = store.set().metadata();
  auto field = [&](const char* key) {
    auto it = metadata.find(key);
    return it == metadata.end() ? std::string() : it->second;
  };
  SWARMT_CHECK_INPUT(field("format") == kStateFormat, path, ": not a swarmt state file (metadata 'format' is '",
                     field("format"), "', expected '", kStateFormat, "')");
  SWARMT_CHECK_INPUT(field("version") == kStateVersion, path, ": state file version '", field("version"),
                     "' is not supported (this swarmt reads version ", kStateVersion, ")");
  std::map<std::string, at::Tensor> tensors;
  for (const auto& name : store.names()) tensors[name] = store.get(name);
  SWARMT_CHECK_INPUT(state_checksum(metadata, tensors) == field("sha256"), path,
                     ": checksum mismatch: the file was changed or damaged after it was written");
  SWARMT_CHECK_INPUT(field("model") == model_state_fingerprint(model), path,
                     ": the state was saved from a model of another configuration, dtype or window");
  LoadedModelState loaded;
  loaded.state = model.new_state(/*batch=*/1);
  StateFieldsReader reader(path, tensors, metadata);
  loaded.state.fields(reader);
  reader.check_all_used();
  for (const auto& [key, value] : metadata)
    if (key.rfind(kUserPrefix, 0) == 0) loaded.user_metadata[key.substr(std::string(kUserPrefix).size())] = value;
  return loaded;
}

}  // namespace swarmt::models
