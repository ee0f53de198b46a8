#include "swarmt/models/armt_io.h"

#include <filesystem>

#include "swarmt/core/atomic_file.h"
#include "swarmt/core/error.h"
#include "swarmt/core/nonfinite.h"
#include "swarmt/core/safetensors_torch.h"

namespace fs = std::filesystem;

namespace swarmt::models {

bool is_armt_adapter_dir(const std::string& dir) {
  return fs::exists(fs::path(dir) / kArmtConfigFile) && !fs::exists(fs::path(dir) / "config.json");
}

std::shared_ptr<ArmtModel> create_armt(const std::string& base_dir, const ArmtConfig& config, const LoadOptions& options) {
  SWARMT_CHECK_INPUT(!is_armt_adapter_dir(base_dir), base_dir, ": is an ARMT adapter; the base must be a plain model");
  auto base = load_model(base_dir, options);
  SWARMT_CHECK_INPUT(base->model_type() != "armt", base_dir, ": is an ARMT model; the base must be a plain model");
  auto model = std::make_shared<ArmtModel>(base, config);
  model->eval();
  return model;
}

namespace {

struct AdapterFile {
  Json json;
  std::string path;
  std::string base_dir;
};

AdapterFile read_adapter_config(const std::string& dir) {
  AdapterFile f;
  f.path = (fs::path(dir) / kArmtConfigFile).string();
  SWARMT_CHECK_INPUT(fs::exists(f.path), dir, ": no ", kArmtConfigFile, " (not an ARMT adapter directory)");
  f.json = read_json_file(f.path);
  SWARMT_CHECK_INPUT(f.json.is_object(), f.path, ": must be a JSON object");
  JsonView v(f.json, f.path);
  const std::string type = v.get_string("model_type");
  SWARMT_CHECK_INPUT(type == "armt", v.describe("model_type"), " must be \"armt\" (got \"", type, "\")");
  const std::string base = v.get_string("base_model");
  SWARMT_CHECK_INPUT(!base.empty(), v.describe("base_model"), " must not be empty");
  fs::path base_path(base);
  f.base_dir = (base_path.is_absolute() ? base_path : fs::path(dir) / base_path).lexically_normal().string();
  SWARMT_CHECK_INPUT(fs::is_directory(f.base_dir), v.describe("base_model"), ": \"", base,
                     "\" is not a directory (resolved to ", f.base_dir, "; paths are relative to the adapter)");
  return f;
}

}  // namespace

std::string armt_base_dir(const std::string& adapter_dir) { return read_adapter_config(adapter_dir).base_dir; }

std::shared_ptr<ArmtModel> load_armt_adapter(const std::string& dir, const LoadOptions& options) {
  AdapterFile f = read_adapter_config(dir);
  JsonView v(f.json, f.path);
  ArmtConfig config = ArmtConfig::from_json(f.json, f.path);
  LoadOptions base_options = options;
  auto base = load_model(f.base_dir, base_options);
  // The adapter was trained on one base; catch the wrong base before loading tensors of the wrong shape.
  if (v.has("base_model_type"))
    SWARMT_CHECK_INPUT(v.get_string("base_model_type") == base->model_type(), f.path, ": the adapter was made for a ",
                       v.get_string("base_model_type"), " model, but ", f.base_dir, " holds a ", base->model_type(),
                       " model");
  if (v.has("base_hidden_size"))
    SWARMT_CHECK_INPUT(v.get_int("base_hidden_size") == base->hidden_size(), f.path, ": the adapter was made for ",
                       "hidden_size ", v.get_int("base_hidden_size"), ", but ", f.base_dir, " has ", base->hidden_size());
  if (v.has("base_num_layers"))
    SWARMT_CHECK_INPUT(v.get_int("base_num_layers") == base->num_layers(), f.path, ": the adapter was made for ",
                       v.get_int("base_num_layers"), " layers, but ", f.base_dir, " has ", base->num_layers());
  auto model = std::make_shared<ArmtModel>(base, config);
  // A training checkpoint of a frozen-base run keeps the adapter tensors under the trainer's name.
  std::string weights = (fs::path(dir) / kArmtWeightsFile).string();
  if (!fs::exists(weights) && fs::exists(fs::path(dir) / "model.safetensors"))
    weights = (fs::path(dir) / "model.safetensors").string();
  SWARMT_CHECK_INPUT(fs::exists(weights), dir, ": no ", kArmtWeightsFile);
  TensorStore store = TensorStore::open(weights);
  if (!options.allow_nonfinite) check_weights_finite(store);
  model->load_adapter_tensors([&](const std::string& name) { return store.has(name) ? store.get(name) : at::Tensor(); },
                              store.path());
  model->eval();
  return model;
}

NamedFiles armt_adapter_description_files(const ArmtModel& model, const std::string& dir,
                                          const std::string& base_dir, const ModelAssets& assets) {
  std::string reference = base_dir;
  if (!fs::path(base_dir).is_absolute()) {
    // Relative to the adapter directory, so that both can move together.
    reference = fs::relative(fs::absolute(base_dir), fs::absolute(dir)).string();
    if (reference.empty()) reference = fs::absolute(base_dir).string();
  }
  auto* base = model.base_ptr().get();
  Json config = model.config().to_json();
  config["model_type"] = "armt";
  config["base_model"] = reference;
  config["base_model_type"] = base->model_type();
  config["base_hidden_size"] = base->hidden_size();
  config["base_num_layers"] = base->num_layers();
  NamedFiles files = asset_files(assets);
  files.emplace_back(kArmtConfigFile, config.dump(2) + "\n");
  return files;
}

void save_armt_adapter(const ArmtModel& model, const std::string& dir, const std::string& base_dir,
                       const ModelAssets& assets) {
  fs::create_directories(dir);
  save_safetensors((fs::path(dir) / kArmtWeightsFile).string(), model.adapter_tensors(), {{"format", "pt"}});
  for (const auto& [name, contents] : armt_adapter_description_files(model, dir, base_dir, assets))
    write_file_atomically((fs::path(dir) / name).string(), contents);
}

}  // namespace swarmt::models
