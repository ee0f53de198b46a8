// Small helpers shared by the subcommands: devices, dtypes, id lists, file reading.
#pragma once

#include <ATen/ATen.h>

#include <optional>
#include <string>
#include <vector>

#include "swarmt/core/json.h"

namespace swarmt::cli {

// "cpu", "cuda", "cuda:1" -> Device; BadInput if unknown or CUDA is unavailable.
at::Device parse_device(const std::string& text);
// "" -> nullopt (as stored); otherwise float32 / bfloat16 / float16 / float64.
std::optional<at::ScalarType> parse_dtype(const std::string& text);
// "1,2,3" or "[1, 2, 3]" -> ids; BadInput naming `option` on anything else.
std::vector<int64_t> parse_id_list(const std::string& text, const std::string& option);
// "a, b,c" -> {"a", "b", "c"} (items trimmed of spaces, empty items dropped).
std::vector<std::string> split_list(const std::string& text);
// "4096,8k,128k,1M" -> lengths (k = 1024, M = 1024²); BadInput naming `option` on anything else or an empty list.
std::vector<int64_t> parse_lengths(const std::string& text, const std::string& option);
// Runs this executable again with `arguments` (measurements that need a fresh process: peak memory) and
// parses the last JSON object it prints; `what` names the run in errors.
Json run_self_for_json(const std::string& arguments, const std::string& what);

}  // namespace swarmt::cli
