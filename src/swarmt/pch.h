// Precompiled header for every libtorch-using translation unit of swarmt_lib (and the tests that reuse
// it). Parsing <torch/torch.h> costs ~15 s per file on 2 cores; precompiled it costs well under one.
#pragma once
#include <ATen/ATen.h>
#include <torch/torch.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>
