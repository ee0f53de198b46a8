#include "swarmt/train/armt_task.h"

#include <fnmatch.h>

#include <algorithm>
#include <filesystem>

#include "swarmt/core/error.h"
#include "swarmt/core/random.h"
#include "swarmt/models/armt_io.h"
#include "swarmt/train/memory_check.h"

namespace fs = std::filesystem;

namespace swarmt::train {

namespace {

// Random segment counts per sample: sample i uses 1..n segments of real data (drawn from i), padded to n
// segments with the pad id, no loss and its own document id on the padding.
class PaddedSegmentsSource : public data::DataSource {
 public:
  PaddedSegmentsSource(std::function<std::shared_ptr<const data::DataSource>(int64_t)> source_of_length,
                       int64_t segments, int64_t segment_size, int64_t pad_id, uint64_t seed)
      : source_of_length_(std::move(source_of_length)),
        segments_(segments),
        segment_size_(segment_size),
        pad_id_(pad_id),
        seed_(seed) {}

  data::Sample sample(int64_t index) const override {
    const int64_t real = 1 + static_cast<int64_t>(mix_key(seed_, static_cast<uint64_t>(index)) % segments_);
    data::Sample s = source_of_length_(real * segment_size_)->sample(index);
    const size_t n = static_cast<size_t>(segments_ * segment_size_);
    if (s.doc_ids.empty()) s.doc_ids.assign(s.tokens.size(), 0);
    const int64_t pad_doc = *std::max_element(s.doc_ids.begin(), s.doc_ids.end()) + 1;
    s.tokens.resize(n, pad_id_);
    s.targets.resize(n, data::kIgnoreIndex);
    s.doc_ids.resize(n, pad_doc);
    return s;
  }
  int64_t sequence_length() const override { return segments_ * segment_size_; }
  std::string describe() const override { return "padded segments"; }

 private:
  std::function<std::shared_ptr<const data::DataSource>(int64_t)> source_of_length_;
  int64_t segments_, segment_size_, pad_id_;
  uint64_t seed_;
};

}  // namespace

ArmtTask::ArmtTask(std::shared_ptr<models::ArmtModel> model, std::string base_dir, std::vector<ArmtPhase> phases,
                   ArmtCurriculum curriculum, std::shared_ptr<const data::TextTokenizer> tokenizer, bool freeze_base,
                   ArmtOutput output, uint64_t seed, int64_t batch_size, std::string source)
    : model_(std::move(model)),
      base_dir_(std::move(base_dir)),
      phases_(std::move(phases)),
      curriculum_(std::move(curriculum)),
      tokenizer_(std::move(tokenizer)),
      freeze_base_(freeze_base),
      output_(output),
      seed_(seed),
      batch_size_(batch_size),
      source_(std::move(source)) {
  if (freeze_base_)
    for (auto& p : model_->base().parameters()) p.set_requires_grad(false);
}

std::vector<NamedParameter> ArmtTask::trainable_parameters() {
  std::vector<NamedParameter> out;
  for (auto& item : model_->named_parameters())
    if (item.value().requires_grad()) out.push_back({item.key(), item.value()});
  return out;
}

void ArmtTask::freeze_parameters(const std::vector<std::string>& patterns, const std::string& field) {
  for (size_t i = 0; i < patterns.size(); ++i) {
    int64_t matched = 0;
    for (auto& item : model_->named_parameters()) {
      if (fnmatch(patterns[i].c_str(), item.key().c_str(), 0) != 0) continue;
      item.value().set_requires_grad(false);
      ++matched;
    }
    if (matched > 0) continue;
    // Name real parameters in the message: the base's naming depends on its architecture.
    std::string memory_example, base_example;
    for (const auto& item : model_->named_parameters()) {
      std::string& example = item.key().rfind("armt.", 0) == 0 ? memory_example : base_example;
      if (example.empty()) example = item.key();
    }
    throw_input_error(field, "[", i, "]: \"", patterns[i], "\" names no parameter of the model (names such as ",
                      memory_example, " or ", base_example, "; * matches any characters)");
  }
  frozen_patterns_ = patterns;
}

StepPlan ArmtTask::plan(int64_t step, int64_t) const {
  const int64_t index = curriculum_.stage_index(step);
  const ArmtStage& stage = curriculum_.stages()[index];
  StepPlan p;
  p.num_segments = stage.segments;
  p.stage = index;
  p.phase = str_cat(phases_[stage.phase].name, " stage ", index + 1, "/", curriculum_.stages().size());
  p.lr_multiplier = curriculum_.lr_multiplier(step);
  return p;
}

std::shared_ptr<const data::DataSource> ArmtTask::source(int64_t phase, bool validation, int64_t length) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto key = std::make_tuple(phase, validation, length);
  auto it = sources_.find(key);
  if (it != sources_.end()) return it->second;
  const Json& config = validation ? phases_[phase].validation_data : phases_[phase].train_data;
  JsonView view(config, str_cat(source_, ": phase '", phases_[phase].name, "' ", validation ? "validation" : "train",
                                " data"));
  // Training data plans its curricula (e.g. the recall task's "pairs") over the phase's own steps: sample
  // indices are global (step x batch size), so the phase's first index is where its first stage starts.
  int64_t first_step = -1, steps = 0;
  for (const auto& stage : curriculum_.stages()) {
    if (stage.phase != phase) continue;
    if (first_step < 0) first_step = stage.first_step;
    steps += stage.steps;
  }
  const int64_t planned = validation || first_step < 0 ? 0 : steps * batch_size_;
  auto made = data::make_data_source(view, *tokenizer_, length, seed_ + (validation ? 1000003 : 0), planned,
                                     planned > 0 ? first_step * batch_size_ : 0);
  sources_[key] = made;
  return made;
}

data::Batch ArmtTask::train_batch(const StepPlan& plan, int64_t first_sample, int64_t rows) {
  SWARMT_CHECK(plan.stage >= 0 && plan.stage < static_cast<int64_t>(curriculum_.stages().size()));
  const ArmtStage* stage = &curriculum_.stages()[plan.stage];
  const int64_t length = stage->segments * model_->config().segment_size;
  if (!stage->random_segments) return data::make_batch(*source(stage->phase, false, length), first_sample, rows);
  const int64_t phase = stage->phase;
  PaddedSegmentsSource padded([this, phase](int64_t n) { return source(phase, false, n); }, stage->segments,
                              model_->config().segment_size, tokenizer_->ids.pad, seed_ ^ 0xA5A5u);
  return data::make_batch(padded, first_sample, rows);
}

int64_t ArmtTask::validation_phase() const {
  for (int64_t p = static_cast<int64_t>(phases_.size()) - 1; p >= 0; --p)
    if (!phases_[p].validation_data.is_null()) return p;
  return -1;
}

bool ArmtTask::has_validation() const { return validation_phase() >= 0; }

data::Batch ArmtTask::validation_batch(int64_t index, int64_t rows) {
  // The last phase with validation data, at the longest segment count of its curriculum: the setting the
  // model is trained for.
  const int64_t phase = validation_phase();
  SWARMT_CHECK(phase >= 0);
  int64_t segments = 1;
  for (const auto& s : curriculum_.stages())
    if (s.phase == phase) segments = std::max(segments, s.segments);
  return data::make_batch(*source(phase, true, segments * model_->config().segment_size), index * rows, rows);
}

LossTerms ArmtTask::loss(const data::Batch& batch, const StepPlan&) {
  models::ForwardOptions options;
  options.doc_ids = batch.doc_ids;
  model_->train(torch::GradMode::is_enabled());
  auto logits = model_->forward(batch.tokens, options);
  return cross_entropy_sum(logits, batch.targets.to(logits.device()));
}

std::vector<std::pair<std::string, at::Tensor>> ArmtTask::checkpoint_tensors() {
  return freeze_base_ ? model_->adapter_tensors() : model_->checkpoint_tensors();
}

void ArmtTask::load_checkpoint_tensors(const std::function<at::Tensor(const std::string&)>& lookup,
                                       const std::string& source) {
  if (freeze_base_) {
    model_->load_adapter_tensors(lookup, source);
  } else {
    model_->load_checkpoint_tensors(lookup, source);
  }
}

void ArmtTask::export_model(const std::string& dir) {
  models::ModelAssets assets{tokenizer_->tokenizer_json, tokenizer_->tokenizer_config_json};
  if (output_ == ArmtOutput::Adapter) {
    models::save_armt_adapter(*model_, dir, base_dir_, assets);
  } else {
    models::save_model(*model_, dir, assets);
  }
}

std::vector<std::pair<std::string, std::string>> ArmtTask::checkpoint_model_files(const std::string& checkpoint_dir) {
  models::ModelAssets assets{tokenizer_->tokenizer_json, tokenizer_->tokenizer_config_json};
  // A frozen base is not in the checkpoint: it is an adapter directory referencing the base. Otherwise the
  // checkpoint holds every tensor, so it is a merged model whatever the run's output layout.
  if (freeze_base_) return models::armt_adapter_description_files(*model_, checkpoint_dir, base_dir_, assets);
  return models::model_description_files(*model_, assets);
}

Json ArmtTask::describe() const {
  Json phases = Json::array();
  for (const auto& p : phases_) phases.push_back(Json{{"name", p.name}, {"train", p.train_data}, {"validation", p.validation_data}});
  Json description{{"task", "armt"},
                   {"armt", model_->config().to_json()},
                   {"base", model_->base().config_json()},
                   {"freeze_base", freeze_base_},
                   {"output", output_ == ArmtOutput::Adapter ? "adapter" : "merged"},
                   {"phases", phases},
                   {"curriculum", curriculum_.to_json()}};
  if (!frozen_patterns_.empty()) description["freeze_parameters"] = frozen_patterns_;
  return description;
}

// ---------------------------------------------------------------------------------------------------

ArmtTrainSetup make_armt_training(const Json& config, const std::string& source, const std::string& base_dir,
                                  const std::string& init_dir, at::Device device) {
  JsonView v(config, source);
  v.reject_unknown_keys({"armt", "tokenizer", "freeze_base", "freeze_parameters", "output", "phases", "data", "curriculum",
                         "training"});
  ArmtTrainSetup setup;
  setup.trainer = v.has("training") ? TrainerOptions::from_json(v.object("training")) : TrainerOptions{};
  torch::manual_seed(static_cast<uint64_t>(setup.trainer.seed));

  // Phases and their curricula.
  std::vector<ArmtPhase> phases;
  ArmtCurriculum curriculum;
  auto add_phase = [&](const JsonView& p, const std::string& default_name) {
    ArmtPhase phase;
    phase.name = p.get_string("name", default_name);
    JsonView data = p.object("data");
    data.reject_unknown_keys({"train", "validation"});
    phase.train_data = data.raw("train");
    SWARMT_CHECK_INPUT(phase.train_data.is_object(), data.describe("train"), " must be a data source object");
    phase.validation_data = data.has("validation") ? data.raw("validation") : Json();
    const Json no_curriculum = Json::object();  // the defaults (JsonView keeps a reference: keep it alive)
    curriculum.add_phase(static_cast<int64_t>(phases.size()),
                         p.has("curriculum") ? p.object("curriculum") : JsonView(no_curriculum, p.describe("curriculum")));
    phases.push_back(std::move(phase));
  };
  if (v.has("phases")) {
    SWARMT_CHECK_INPUT(!v.has("data") && !v.has("curriculum"), source,
                       ": give \"phases\", or one phase as \"data\" + \"curriculum\", not both");
    SWARMT_CHECK_INPUT(v.list_size("phases") > 0, v.describe("phases"), " must list at least one phase");
    for (size_t i = 0; i < v.list_size("phases"); ++i) {
      JsonView p = v.list_object("phases", i);
      p.reject_unknown_keys({"name", "data", "curriculum"});
      add_phase(p, str_cat("phase", i + 1));
    }
  } else {
    SWARMT_CHECK_INPUT(v.has("data"), source, ": \"data\" (or \"phases\") is missing");
    const Json single{{"data", v.raw("data")}, {"curriculum", v.has("curriculum") ? v.raw("curriculum") : Json::object()}};
    add_phase(JsonView(single, source), "train");
  }
  if (v.has("training") && v.object("training").has("max_steps")) {
    SWARMT_CHECK_INPUT(setup.trainer.max_steps == curriculum.total_steps(), v.describe("training"),
                       ": max_steps (", setup.trainer.max_steps, ") must equal the curriculum's total (",
                       curriculum.total_steps(), " steps), or be left out");
  }
  setup.trainer.max_steps = curriculum.total_steps();

  // The model: a fresh adapter over the base, an existing adapter's weights, or a merged ARMT model (its
  // base trained too: a run continued in a new phase).
  std::shared_ptr<models::ArmtModel> model;
  bool merged_init = false;
  if (!init_dir.empty()) {
    SWARMT_CHECK_INPUT(!v.has("armt"), source, ": field 'armt' must be left out with --init (the ARMT config of ",
                       init_dir, " applies)");
    if (models::is_armt_adapter_dir(init_dir)) {
      model = models::load_armt_adapter(init_dir);
    } else {
      SWARMT_CHECK_INPUT(fs::exists(init_dir + "/config.json"), "--init: ", init_dir,
                         " is neither an ARMT adapter directory (armt_config.json) nor a model directory (config.json)");
      model = std::dynamic_pointer_cast<models::ArmtModel>(models::load_model(init_dir));
      SWARMT_CHECK_INPUT(model != nullptr, "--init: ", init_dir, " holds a model that is not an ARMT model; give it as ",
                         "--base to wrap it with a new adapter");
      merged_init = true;
    }
  } else {
    SWARMT_CHECK_INPUT(v.has("armt"), source, ": field 'armt' (the ARMT config) is missing");
    model = models::create_armt(base_dir, models::ArmtConfig::from_json(v.raw("armt"), source + ": field 'armt'"));
  }
  model->to(device);
  model->train();

  std::string tokenizer_spec = v.get_string("tokenizer", "");
  if (tokenizer_spec.empty()) tokenizer_spec = fs::exists(base_dir + "/tokenizer.json") ? base_dir : "byte";
  auto tok = std::make_shared<data::TextTokenizer>(data::load_text_tokenizer(tokenizer_spec));
  SWARMT_CHECK_INPUT(tok->tokenizer.vocab_size() <= model->vocab_size(), source, ": the tokenizer has ",
                     tok->tokenizer.vocab_size(), " tokens but the model's vocab_size is ", model->vocab_size());

  const bool freeze = v.get_bool("freeze_base", false);
  const std::string output = v.get_string("output", "auto");
  SWARMT_CHECK_INPUT(output == "auto" || output == "adapter" || output == "merged", v.describe("output"),
                     " must be \"auto\", \"adapter\" or \"merged\", got \"", output, "\"");
  SWARMT_CHECK_INPUT(!(output == "adapter" && !freeze), v.describe("output"),
                     ": an adapter alone cannot hold a trained base model; set \"freeze_base\": true or use "
                     "\"merged\" (or \"auto\")");
  const ArmtOutput out = (output == "merged" || (output == "auto" && !freeze)) ? ArmtOutput::Merged : ArmtOutput::Adapter;
  SWARMT_CHECK_INPUT(!(merged_init && out == ArmtOutput::Adapter), v.describe("output"), ": --init ", init_dir,
                     " is a merged ARMT model, whose base weights are its own; an adapter cannot reference them, so ",
                     "write a merged model (\"output\": \"merged\")");

  // Without per-segment checkpointing, backward keeps every segment's activations (+ memory tokens).
  int64_t longest = 1;
  for (const auto& stage : curriculum.stages()) longest = std::max(longest, stage.segments);
  const auto& ac = model->config();
  const int64_t tokens_per_row = (ac.checkpoint_segments ? 1 : longest) * (ac.segment_size + ac.num_memory_tokens);
  int64_t trainable = 0;
  for (const auto& item : model->named_parameters())
    if (!freeze || item.key().rfind("armt.", 0) == 0) trainable += item.value().numel();
  check_training_fits(*model, trainable, tokens_per_row, setup.trainer.batch_size, setup.trainer.grad_accum, source);
  setup.task = std::make_unique<ArmtTask>(model, base_dir, std::move(phases), std::move(curriculum), tok, freeze, out,
                                          setup.trainer.seed, setup.trainer.batch_size, source);
  if (v.has("freeze_parameters")) {
    setup.task->freeze_parameters(v.get_string_list("freeze_parameters"), v.describe("freeze_parameters"));
  }
  // Fail now, not at step 1000, when a phase's data is unusable.
  for (const auto& stage : setup.task->curriculum().stages()) {
    StepPlan p = setup.task->plan(stage.first_step, setup.trainer.max_steps);
    setup.task->train_batch(p, 0, 1);
  }
  if (setup.task->has_validation()) setup.task->validation_batch(0, 1);
  return setup;
}

}  // namespace swarmt::train
