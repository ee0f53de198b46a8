#include "swarmt/cli/cli_util.h"

#include <torch/cuda.h>

#include <unistd.h>

#include <cstdio>
#include <sstream>

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

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    auto b = item.find_first_not_of(' '), e = item.find_last_not_of(' ');
    if (b != std::string::npos) out.push_back(item.substr(b, e - b + 1));
  }
  return out;
}

// "4096,8k,128k" -> lengths; k = 1024.
std::vector<int64_t> parse_lengths(const std::string& text, const std::string& option) {
  std::vector<int64_t> out;
  for (const auto& item : split_list(text)) {
    std::string digits = item;
    int64_t scale = 1;
    if (!digits.empty() && (digits.back() == 'k' || digits.back() == 'K')) {
      scale = 1024;
      digits.pop_back();
    } else if (!digits.empty() && (digits.back() == 'm' || digits.back() == 'M')) {
      scale = 1024 * 1024;
      digits.pop_back();
    }
    size_t used = 0;
    long long v = -1;
    try {
      v = std::stoll(digits, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    SWARMT_CHECK_INPUT(used == digits.size() && !digits.empty() && v > 0, option, ": '", item,
                       "' is not a positive length (e.g. 4096, 4k or 1M)");
    SWARMT_CHECK_INPUT(v <= (int64_t{1} << 40) / scale, option, ": '", item, "' is too large (at most 1T tokens)");
    out.push_back(v * scale);
  }
  SWARMT_CHECK_INPUT(!out.empty(), option, ": no value given");
  return out;
}

Json run_self_for_json(const std::string& arguments, const std::string& what) {
  const std::string command = "/proc/" + std::to_string(::getpid()) + "/exe " + arguments;
  FILE* pipe = ::popen(command.c_str(), "r");
  SWARMT_CHECK(pipe != nullptr, what, ": could not start a child process");
  std::string output;
  char buffer[4096];
  while (size_t got = std::fread(buffer, 1, sizeof buffer, pipe)) output.append(buffer, got);
  const int status = ::pclose(pipe);
  SWARMT_CHECK(status == 0, what, " failed (status ", status, ")");
  const auto line_start = output.rfind('{');
  SWARMT_CHECK(line_start != std::string::npos, what, ": no result");
  return Json::parse(output.substr(line_start));
}

}  // namespace swarmt::cli
