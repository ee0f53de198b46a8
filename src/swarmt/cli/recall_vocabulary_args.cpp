#include "swarmt/cli/recall_vocabulary_args.h"

#include <filesystem>

#include "swarmt/cli/cli_util.h"
#include "swarmt/core/checkpoint.h"
#include "swarmt/core/error.h"
#include "swarmt/core/json.h"

namespace swarmt::cli {

void parse_id_range(const std::string& text, const std::string& option, int64_t& begin, int64_t& end) {
  if (text.empty()) return;
  const auto colon = text.find(':');
  SWARMT_CHECK_INPUT(colon != std::string::npos, option, ": '", text, "' is not a range BEGIN:END");
  const auto ids = parse_id_list(text.substr(0, colon) + "," + text.substr(colon + 1), option);
  SWARMT_CHECK_INPUT(ids.size() == 2, option, ": '", text, "' is not a range BEGIN:END");
  SWARMT_CHECK_INPUT(ids[0] < ids[1], option, ": '", text, "' is an empty range (BEGIN must be below END)");
  begin = ids[0];
  end = ids[1];
}

namespace {

// train_config.json beside the model, or, for a training checkpoint (RUN/checkpoints/checkpoint-<step>),
// the run's.
std::string training_config_of(const std::string& model_dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path dir = fs::path(model_dir).lexically_normal();
  if (fs::exists(dir / "train_config.json", ec)) return (dir / "train_config.json").string();
  const fs::path named = dir.has_filename() ? dir : dir.parent_path();  // "RUN/checkpoints/checkpoint-1/"
  int64_t step = 0;
  if (parse_checkpoint_dir_name(named.filename().string(), &step) && named.parent_path().filename() == "checkpoints") {
    const fs::path run_config = named.parent_path().parent_path() / "train_config.json";
    if (fs::exists(run_config, ec)) return run_config.string();
  }
  return "";
}

}  // namespace

void recall_defaults_from_training(const std::string& model_dir, data::RecallVocabulary& vocabulary,
                                   int64_t* training_length) {
  const std::string path = training_config_of(model_dir);
  if (path.empty()) return;
  const Json config = read_json_file(path);
  if (training_length != nullptr && *training_length == 0 && config.contains("sequence_length") &&
      config["sequence_length"].is_number_integer())
    *training_length = config["sequence_length"].get<int64_t>();
  // A plain training config holds data.train.tasks; an ARMT one holds phases[].data.train.tasks (the last
  // phase with a recall task wins: the model ended there).
  const auto recall_tasks_of = [&](const Json& holder, const std::string& where) {
    if (!holder.is_object() || !holder.contains("data") || !holder["data"].is_object() ||
        !holder["data"].contains("train") || !holder["data"]["train"].is_object() ||
        !holder["data"]["train"].contains("tasks") || !holder["data"]["train"]["tasks"].is_array())
      return;
    for (const auto& task : holder["data"]["train"]["tasks"]) {
      if (!task.is_object() || task.value("task", "") != "recall") continue;
      vocabulary = data::recall_training_config_from_json(JsonView(task, path, where + "data.train.tasks[recall]."), 0)
                       .vocabulary;
    }
  };
  recall_tasks_of(config, "");
  if (config.contains("phases") && config["phases"].is_array())
    for (size_t i = 0; i < config["phases"].size(); ++i) recall_tasks_of(config["phases"][i], str_cat("phases[", i, "]."));
}

data::RecallVocabulary recall_vocabulary_from_args(data::RecallVocabulary v, const std::string& keys,
                                                   const std::string& values, const std::string& filler) {
  parse_id_range(keys, "--keys", v.key_begin, v.key_end);
  parse_id_range(values, "--values", v.value_begin, v.value_end);
  parse_id_range(filler, "--filler", v.filler_begin, v.filler_end);
  const auto overlap = [](int64_t b1, int64_t e1, int64_t b2, int64_t e2) { return b1 < e2 && b2 < e1; };
  SWARMT_CHECK_INPUT(!overlap(v.key_begin, v.key_end, v.value_begin, v.value_end) &&
                         !overlap(v.key_begin, v.key_end, v.filler_begin, v.filler_end) &&
                         !overlap(v.value_begin, v.value_end, v.filler_begin, v.filler_end),
                     "--keys ", v.key_begin, ":", v.key_end, ", --values ", v.value_begin, ":", v.value_end,
                     " and --filler ", v.filler_begin, ":", v.filler_end, " must be disjoint id ranges");
  return v;
}

}  // namespace swarmt::cli
