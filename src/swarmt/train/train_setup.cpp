#include "swarmt/train/train_setup.h"

#include <filesystem>

#include "swarmt/core/error.h"
#include "swarmt/data/source_factory.h"
#include "swarmt/models/model_io.h"
#include "swarmt/models/registry.h"
#include "swarmt/train/lm_task.h"
#include "swarmt/train/memory_check.h"
#include "swarmt/models/model_footprint.h"

namespace fs = std::filesystem;

namespace swarmt::train {

TrainSetup make_lm_training(const Json& config, const std::string& source, at::Device device) {
  JsonView v(config, source);
  v.reject_unknown_keys({"model", "init_from", "tokenizer", "sequence_length", "data", "window_schedule", "training"});
  SWARMT_CHECK_INPUT(v.has("model") != v.has("init_from"), source,
                     ": give exactly one of \"model\" (a new model's config) and \"init_from\" (a model directory)");
  TrainSetup setup;
  setup.trainer = v.has("training") ? TrainerOptions::from_json(v.object("training")) : TrainerOptions{};
  torch::manual_seed(static_cast<uint64_t>(setup.trainer.seed));

  std::shared_ptr<models::CausalLM> model;
  std::string tokenizer_spec = v.get_string("tokenizer", "");
  if (v.has("model")) {
    Json model_config = v.raw("model");
    if (!model_config.contains("model_type")) model_config["model_type"] = "swax";
    // Refuse a model that cannot even be allocated before allocating it (fp32 weights).
    models::check_model_fits(model_config, source + ": field 'model'");
    model = models::create_model(model_config, source + ": field 'model'");
    if (tokenizer_spec.empty()) tokenizer_spec = "byte";
  } else {
    const std::string dir = v.get_string("init_from");
    model = models::load_model(dir);
    model->train();
    if (tokenizer_spec.empty()) tokenizer_spec = fs::exists(dir + "/tokenizer.json") ? dir : "byte";
  }
  model->to(device);
  auto tok = data::load_text_tokenizer(tokenizer_spec);
  SWARMT_CHECK_INPUT(tok.tokenizer.vocab_size() <= model->vocab_size(), source, ": the tokenizer has ",
                     tok.tokenizer.vocab_size(), " tokens but the model's vocab_size is ", model->vocab_size());

  const int64_t seq_len = v.get_int_in("sequence_length", 16, int64_t{1} << 24);
  JsonView data = v.object("data");
  data.reject_unknown_keys({"train", "validation"});
  auto train_source = data::make_data_source(data.object("train"), tok, seq_len, setup.trainer.seed,
                                             setup.trainer.max_steps * setup.trainer.batch_size);
  std::shared_ptr<const data::DataSource> validation;
  if (data.has("validation"))
    validation = data::make_data_source(data.object("validation"), tok, seq_len, setup.trainer.seed + 1000003);
  WindowSchedule windows;
  if (v.has("window_schedule")) {
    windows = WindowSchedule::from_json(v.object("window_schedule"));
    windows.seed = windows.seed ? windows.seed : setup.trainer.seed;
    SWARMT_CHECK_INPUT(windows.type == "none" || model->inference_window() > 0, v.describe("window_schedule"),
                       " needs a model with sliding-window (S) layers");
  }
  // After training, the model is used at the long window (SWAX: stochastic models are tested at w_long).
  if (windows.type == "stochastic") model->set_inference_window(windows.long_window);
  if (windows.type == "fixed") model->set_inference_window(windows.window);
  models::ModelAssets assets{tok.tokenizer_json, tok.tokenizer_config_json};
  int64_t trainable = 0;
  for (const auto& p : model->parameters())
    if (p.requires_grad()) trainable += p.numel();
  check_training_fits(*model, trainable, seq_len, setup.trainer.batch_size, setup.trainer.grad_accum, source);
  setup.task = std::make_unique<CausalLMTask>(model, train_source, validation, windows, assets);
  return setup;
}

}  // namespace swarmt::train
