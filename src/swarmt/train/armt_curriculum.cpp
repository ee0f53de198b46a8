#include "swarmt/train/armt_curriculum.h"

#include <cmath>

#include "swarmt/core/error.h"

namespace swarmt::train {

void ArmtCurriculum::add_phase(int64_t phase, const JsonView& v) {
  v.reject_unknown_keys({"segments", "steps", "steps_per_stage", "warmup_fraction", "schedule", "min_lr_ratio",
                         "random_segments"});
  std::vector<int64_t> segments = v.has("segments") ? v.get_int_list("segments") : std::vector<int64_t>{2, 4, 8};
  SWARMT_CHECK_INPUT(!segments.empty(), v.describe("segments"), " must list at least one segment count");
  for (int64_t n : segments)
    SWARMT_CHECK_INPUT(n >= 1 && n <= 4096, v.describe("segments"), " must hold counts in [1, 4096], got ", n);
  std::vector<int64_t> steps;
  if (v.has("steps")) {
    SWARMT_CHECK_INPUT(!v.has("steps_per_stage"), v.describe("steps"), ": give \"steps\" or \"steps_per_stage\", not both");
    steps = v.get_int_list("steps");
    SWARMT_CHECK_INPUT(steps.size() == segments.size(), v.describe("steps"), " has ", steps.size(),
                       " entries but \"segments\" has ", segments.size());
  } else {
    SWARMT_CHECK_INPUT(v.has("steps_per_stage"), v.describe("steps"), " is missing (or give \"steps_per_stage\")");
    steps.assign(segments.size(), v.get_int("steps_per_stage"));
  }
  for (int64_t s : steps)
    SWARMT_CHECK_INPUT(s >= 1 && s <= (int64_t{1} << 40), v.describe(v.has("steps") ? "steps" : "steps_per_stage"),
                       " must be positive step counts, got ", s);
  const double warmup = v.get_number("warmup_fraction", 0.1);
  SWARMT_CHECK_INPUT(warmup >= 0 && warmup < 1, v.describe("warmup_fraction"), " must be in [0, 1), got ", warmup);
  const std::string schedule = v.get_string("schedule", "cosine");
  SWARMT_CHECK_INPUT(schedule == "cosine" || schedule == "linear" || schedule == "constant", v.describe("schedule"),
                     " must be \"cosine\", \"linear\" or \"constant\", got \"", schedule, "\"");
  const double min_ratio = v.get_number("min_lr_ratio", 0.1);
  SWARMT_CHECK_INPUT(min_ratio >= 0 && min_ratio <= 1, v.describe("min_lr_ratio"), " must be in [0, 1], got ", min_ratio);
  const bool random = v.get_bool("random_segments", false);
  for (size_t i = 0; i < segments.size(); ++i) {
    ArmtStage s;
    s.phase = phase;
    s.segments = segments[i];
    s.steps = steps[i];
    s.first_step = total_steps();
    s.warmup_fraction = warmup;
    s.schedule = schedule;
    s.min_lr_ratio = min_ratio;
    s.random_segments = random;
    stages_.push_back(s);
  }
}

int64_t ArmtCurriculum::total_steps() const {
  return stages_.empty() ? 0 : stages_.back().first_step + stages_.back().steps;
}

int64_t ArmtCurriculum::stage_index(int64_t step) const {
  SWARMT_CHECK(!stages_.empty());
  for (size_t i = 0; i < stages_.size(); ++i)
    if (step < stages_[i].first_step + stages_[i].steps) return static_cast<int64_t>(i);
  return static_cast<int64_t>(stages_.size()) - 1;  // past the end (evaluation after training): the last stage
}

const ArmtStage& ArmtCurriculum::stage_at(int64_t step) const { return stages_[stage_index(step)]; }

double ArmtCurriculum::lr_multiplier(int64_t step) const {
  const ArmtStage& s = stage_at(step);
  const int64_t local = std::min(step - s.first_step, s.steps - 1);
  const int64_t warmup = static_cast<int64_t>(std::floor(s.warmup_fraction * s.steps));
  if (local < warmup) return static_cast<double>(local + 1) / static_cast<double>(warmup + 1);
  if (s.schedule == "constant") return 1.0;
  const int64_t decay_steps = s.steps - warmup;
  const double progress = decay_steps <= 1 ? 1.0 : static_cast<double>(local - warmup) / static_cast<double>(decay_steps - 1);
  const double shape = s.schedule == "linear" ? 1.0 - progress : 0.5 * (1.0 + std::cos(M_PI * progress));
  return s.min_lr_ratio + (1.0 - s.min_lr_ratio) * shape;
}

Json ArmtCurriculum::to_json() const {
  Json stages = Json::array();
  for (const auto& s : stages_)
    stages.push_back(Json{{"phase", s.phase},
                          {"segments", s.segments},
                          {"steps", s.steps},
                          {"first_step", s.first_step},
                          {"warmup_fraction", s.warmup_fraction},
                          {"schedule", s.schedule},
                          {"min_lr_ratio", s.min_lr_ratio},
                          {"random_segments", s.random_segments}});
  return stages;
}

}  // namespace swarmt::train
