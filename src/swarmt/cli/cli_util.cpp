#include "swarmt/cli/cli_util.h"

#include <torch/cuda.h>

#include "swarmt/core/error.h"
#include "swarmt/models/model_io.h"

namespace swarmt::cli {

at::Device parse_device(const std::string& text) {
  if (text == "cpu") return at::Device(at::kCPU);
  if (text.rfind("cuda", 0) == 0) {
    SWARMT_CHECK_INPUT(torch::cuda::is_available(), "--device ", text,
                       ": CUDA is not available in this build or on this machine");
    try {
      return at::Device(text);
    } catch (const c10::Error&) {
    }
  }
  throw_input_error("--device '", text, "' is not a device (cpu, cuda, cuda:N)");
}

std::optional<at::ScalarType> parse_dtype(const std::string& text) {
  if (text.empty()) return std::nullopt;
  return models::dtype_from_name(text, "--dtype");
}

std::vector<int64_t> parse_id_list(const std::string& text, const std::string& option) {
  std::vector<int64_t> ids;
  std::string current;
  auto flush = [&]() {
    if (current.empty()) return;
    size_t used = 0;
    long long v = 0;
    try {
      v = std::stoll(current, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    SWARMT_CHECK_INPUT(used == current.size() && v >= 0, option, ": '", current, "' is not a token id");
    ids.push_back(v);
    current.clear();
  };
  for (char c : text) {
    if (c == ',' || c == ' ' || c == '[' || c == ']' || c == '\n' || c == '\t') flush();
    else current += c;
  }
  flush();
  SWARMT_CHECK_INPUT(!ids.empty(), option, ": no token ids given");
  return ids;
}

}  // namespace swarmt::cli
