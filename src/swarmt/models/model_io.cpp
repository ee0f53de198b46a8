#include "swarmt/models/model_io.h"

#include <filesystem>

#include "swarmt/core/atomic_file.h"
#include "swarmt/core/error.h"
#include "swarmt/core/memory_budget.h"
#include "swarmt/core/nonfinite.h"
#include "swarmt/core/safetensors_torch.h"
#include "swarmt/models/armt_io.h"
#include "swarmt/models/model_footprint.h"
#include "swarmt/models/registry.h"
#include "swarmt/nn/init.h"

namespace fs = std::filesystem;

namespace swarmt::models {

at::ScalarType dtype_from_name(const std::string& name, const std::string& field) {
  if (name == "float32" || name == "fp32" || name == "f32") return at::kFloat;
  if (name == "bfloat16" || name == "bf16") return at::kBFloat16;
  if (name == "float16" || name == "fp16" || name == "f16") return at::kHalf;
  if (name == "float64" || name == "fp64" || name == "f64") return at::kDouble;
  throw_input_error(field, ": dtype '", name, "' is not supported (float32, bfloat16, float16, float64)");
}

std::string dtype_name(at::ScalarType type) {
  switch (type) {
    case at::kFloat: return "float32";
    case at::kBFloat16: return "bfloat16";
    case at::kHalf: return "float16";
    case at::kDouble: return "float64";
    default: return c10::toString(type);
  }
}

namespace {

// Sets libtorch's default dtype for the guard's lifetime (modules create their parameters in it).
class DefaultDtypeGuard {
 public:
  explicit DefaultDtypeGuard(at::ScalarType dtype) : saved_(c10::get_default_dtype()) {
    c10::set_default_dtype(c10::scalarTypeToTypeMeta(dtype));
  }
  ~DefaultDtypeGuard() { c10::set_default_dtype(saved_); }
  DefaultDtypeGuard(const DefaultDtypeGuard&) = delete;
  DefaultDtypeGuard& operator=(const DefaultDtypeGuard&) = delete;

 private:
  caffe2::TypeMeta saved_;
};

// The dtype a model runs in unless the caller asks for another. SWAX: the config's torch_dtype (its own
// format). Hugging Face models: the dtype the weights are stored in (config.json's torch_dtype, or "dtype"
// in newer transformers, only describes it and may be absent or stale).
at::ScalarType default_dtype(const Json& config, const std::string& config_path, const TensorStore& store) {
  JsonView v(config, config_path);
  if (v.get_string("model_type", "") != "swax") {
    const std::string embedding = "model.embed_tokens.weight";
    if (store.has(embedding)) {
      const at::ScalarType stored = store.get(embedding).scalar_type();
      if (at::isFloatingType(stored)) return stored;
    }
    if (!v.has("torch_dtype") && v.has("dtype"))
      return dtype_from_name(v.get_string("dtype"), config_path + ": field 'dtype'");
  }
  return dtype_from_name(v.get_string("torch_dtype", "float32"), config_path + ": field 'torch_dtype'");
}

}  // namespace

std::shared_ptr<CausalLM> load_model(const std::string& dir, const LoadOptions& options) {
  SWARMT_CHECK_INPUT(fs::is_directory(dir), dir, ": not a model directory");
  if (is_armt_adapter_dir(dir)) return load_armt_adapter(dir, options);
  const std::string config_path = dir + "/config.json";
  SWARMT_CHECK_INPUT(fs::exists(config_path), dir, ": no config.json (not a model directory?)");
  Json config = read_json_file(config_path);
  TensorStore store = TensorStore::open(dir);
  // The model is built in fp32 and then filled: refuse before allocating what cannot fit, by the stored
  // tensors and by what config.json describes (which create_model allocates before any tensor is read).
  int64_t elements = 0;
  for (const auto& name : store.names()) elements += store.set().file_of(name).entry(name).numel();
  check_memory_fits(4 * elements, str_cat("loading ", dir, " (", elements, " parameters)"),
                    "free memory or use a machine with more");
  check_model_fits(config, config_path);
  if (!options.allow_nonfinite) check_weights_finite(store);
  store.release_all();  // the check read every page
  const at::ScalarType dtype = options.dtype ? *options.dtype : default_dtype(config, config_path, store);
  std::shared_ptr<CausalLM> model;
  {
    // Built in the run dtype from the start: a bf16 model never holds an fp32 copy of itself; without
    // drawing a random initialisation that the checkpoint below overwrites.
    DefaultDtypeGuard guard(dtype);
    nn::SkipRandomInit no_init;
    model = create_model(config, config_path);
  }
  model->to(dtype);
  // Each stored tensor's pages are given back once the model has copied it (at the next lookup).
  std::string previous;
  model->load_checkpoint_tensors(
      [&](const std::string& name) {
        if (!previous.empty()) store.release(previous);
        previous = store.has(name) ? name : std::string();
        return store.has(name) ? store.get(name) : at::Tensor();
      },
      store.path());
  model->to(options.device);
  model->eval();
  return model;
}

NamedFiles asset_files(const ModelAssets& assets) {
  NamedFiles files;
  if (!assets.tokenizer_json.empty()) files.emplace_back("tokenizer.json", assets.tokenizer_json);
  if (!assets.tokenizer_config_json.empty()) files.emplace_back("tokenizer_config.json", assets.tokenizer_config_json);
  return files;
}

NamedFiles model_description_files(const CausalLM& model, const ModelAssets& assets) {
  NamedFiles files = asset_files(assets);
  Json config = model.config_json();
  config["torch_dtype"] = dtype_name(model.dtype());
  files.emplace_back("config.json", config.dump(2) + "\n");
  return files;
}

void save_model(CausalLM& model, const std::string& dir, const ModelAssets& assets) {
  fs::create_directories(dir);
  // Weights first, config last: a directory whose config.json is new always has matching weights.
  save_safetensors_model(dir, model.checkpoint_tensors(), {{"format", "pt"}});
  for (const auto& [name, contents] : model_description_files(model, assets))
    write_file_atomically(dir + "/" + name, contents);
}

ModelAssets read_model_assets(const std::string& dir) {
  ModelAssets assets;
  if (fs::exists(dir + "/tokenizer.json")) assets.tokenizer_json = read_text_file(dir + "/tokenizer.json");
  if (fs::exists(dir + "/tokenizer_config.json")) assets.tokenizer_config_json = read_text_file(dir + "/tokenizer_config.json");
  return assets;
}

}  // namespace swarmt::models
