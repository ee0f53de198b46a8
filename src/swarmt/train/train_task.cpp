#include "swarmt/train/train_task.h"

namespace swarmt::train {

Json StepPlan::to_json() const {
  Json j = Json::object();
  if (window > 0) j["window"] = window;
  if (num_segments > 0) j["segments"] = num_segments;
  if (!phase.empty()) j["phase"] = phase;
  return j;
}

}  // namespace swarmt::train
