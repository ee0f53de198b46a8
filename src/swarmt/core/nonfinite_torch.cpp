#include "swarmt/core/nonfinite.h"

#include <algorithm>

#include "swarmt/core/error.h"

namespace swarmt {
namespace {

// Elements per slice of the scan: bounds the temporary boolean tensor to 16 MiB.
constexpr int64_t kScanSlice = int64_t{1} << 24;

// NaN and ±Inf elements of a tensor; 0 for integer tensors, which hold neither.
int64_t count_nonfinite(const at::Tensor& tensor) {
  if (!at::isFloatingType(tensor.scalar_type()) || tensor.numel() == 0) return 0;
  const at::Tensor flat = tensor.reshape({-1});
  int64_t bad = 0;
  for (int64_t start = 0; start < flat.numel(); start += kScanSlice) {
    const at::Tensor slice = flat.narrow(0, start, std::min(kScanSlice, flat.numel() - start));
    bad += slice.numel() - at::isfinite(slice).sum().item<int64_t>();
  }
  return bad;
}

}  // namespace

std::vector<NonFiniteTensor> find_nonfinite_tensors(const TensorStore& store) {
  std::vector<NonFiniteTensor> found;
  for (const std::string& name : store.names()) {
    // Only the float types every libtorch holds; other dtypes (integers, F8 in older libtorch) are skipped
    // without converting them, so that scanning never fails on a file it merely cannot judge.
    const DType dtype = store.set().entry(name).dtype;
    if (dtype != DType::F16 && dtype != DType::BF16 && dtype != DType::F32 && dtype != DType::F64) continue;
    const at::Tensor tensor = store.get(name);
    const int64_t bad = count_nonfinite(tensor);
    store.release(name);  // read once: its pages need not stay resident while the rest is scanned
    if (bad > 0) found.push_back({name, store.set().file_of(name).path(), bad, tensor.numel()});
  }
  return found;
}

void check_weights_finite(const TensorStore& store) {
  const auto found = find_nonfinite_tensors(store);
  if (found.empty()) return;
  const NonFiniteTensor& first = found.front();
  throw_input_error(first.file, ": tensor '", first.name, "' holds ", first.bad_values, " NaN or infinite values (of ",
                    first.numel, ")", found.size() > 1 ? str_cat(", and ", found.size() - 1, " more tensors do too") : "",
                    "; the weights are broken (pass --allow-nonfinite to load them anyway)");
}

}  // namespace swarmt
