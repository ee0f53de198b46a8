// RAII guard for mixed precision (bf16 autocast of matmuls), on CPU or CUDA, across libtorch versions
// (1.13 has per-device functions, 2.x takes the device type as an argument).
#pragma once

#include <ATen/ATen.h>

namespace swarmt::train {

class AutocastGuard {
 public:
  AutocastGuard(at::DeviceType device, bool enabled, at::ScalarType dtype = at::kBFloat16);
  ~AutocastGuard();
  AutocastGuard(const AutocastGuard&) = delete;
  AutocastGuard& operator=(const AutocastGuard&) = delete;

 private:
  at::DeviceType device_;
  bool enabled_;
  bool previous_enabled_ = false;
  at::ScalarType previous_dtype_ = at::kBFloat16;
};

}  // namespace swarmt::train
