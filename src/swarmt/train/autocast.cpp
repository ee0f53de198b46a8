#include "swarmt/train/autocast.h"

#include <ATen/autocast_mode.h>
#include <torch/version.h>

namespace swarmt::train {
namespace {

#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
bool is_enabled(at::DeviceType d) { return at::autocast::is_autocast_enabled(d); }
void set_enabled(at::DeviceType d, bool on) { at::autocast::set_autocast_enabled(d, on); }
at::ScalarType get_dtype(at::DeviceType d) { return at::autocast::get_autocast_dtype(d); }
void set_dtype(at::DeviceType d, at::ScalarType t) { at::autocast::set_autocast_dtype(d, t); }
#else
bool is_enabled(at::DeviceType d) { return d == at::kCUDA ? at::autocast::is_enabled() : at::autocast::is_cpu_enabled(); }
void set_enabled(at::DeviceType d, bool on) {
  if (d == at::kCUDA) at::autocast::set_enabled(on);
  else at::autocast::set_cpu_enabled(on);
}
at::ScalarType get_dtype(at::DeviceType d) {
  return d == at::kCUDA ? at::autocast::get_autocast_gpu_dtype() : at::autocast::get_autocast_cpu_dtype();
}
void set_dtype(at::DeviceType d, at::ScalarType t) {
  if (d == at::kCUDA) at::autocast::set_autocast_gpu_dtype(t);
  else at::autocast::set_autocast_cpu_dtype(t);
}
#endif

}  // namespace

AutocastGuard::AutocastGuard(at::DeviceType device, bool enabled, at::ScalarType dtype)
    : device_(device), enabled_(enabled) {
  if (!enabled_) return;
  previous_enabled_ = is_enabled(device_);
  previous_dtype_ = get_dtype(device_);
  set_dtype(device_, dtype);
  set_enabled(device_, true);
}

AutocastGuard::~AutocastGuard() {
  if (!enabled_) return;
  set_enabled(device_, previous_enabled_);
  set_dtype(device_, previous_dtype_);
  at::autocast::clear_cache();
}

}  // namespace swarmt::train
