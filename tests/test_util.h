// Helpers shared by the tests: temporary directories, running the real swarmt binary, tensor comparison
// that prints the first differing values and the max difference on failure.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace swarmt::testing {

// A fresh directory under the system temp dir, removed (recursively) when the object dies.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

struct CommandResult {
  int exit_code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

// Runs `swarmt <args>` (args are passed to /bin/sh, quote as needed) and captures its output.
CommandResult run_swarmt(const std::string& args);

// Runs any shell command and captures its output.
CommandResult run_shell(const std::string& command);

// Path of a file under tests/data.
std::string test_data(const std::string& name);

// Path of the npm fixtures directory (real tokenizer.json files), or "" if it was not prepared.
std::string fixtures_dir();

// Writes bytes to a file (binary).
void write_file(const std::string& path, const std::string& bytes);

}  // namespace swarmt::testing

// Tensor closeness with a readable failure: max abs difference, its position, and the first values.
::testing::AssertionResult TensorsClose(const at::Tensor& actual, const at::Tensor& expected, double atol,
                                        double rtol = 0.0);
// Whether the autograd graph that produced `t` holds a node whose name contains `name` (a custom
// Function's node is named after its class): tests that compare a fused path with the unfused ops check
// with it that the fused path was taken.
bool AutogradGraphHas(const at::Tensor& t, const std::string& name);

// Standard-normal fp32 values from their own generator seeded with `seed` (the global stream untouched).
at::Tensor SeededRandn(at::IntArrayRef shape, uint64_t seed);
// d(Σ y ⊙ upstream)/d inputs, one tensor per input (undefined for an input y does not depend on).
std::vector<at::Tensor> GradientsOf(const at::Tensor& y, const std::vector<at::Tensor>& inputs,
                                    const at::Tensor& upstream);

#define EXPECT_TENSORS_CLOSE(actual, expected, atol) EXPECT_TRUE(TensorsClose((actual), (expected), (atol)))
#define ASSERT_TENSORS_CLOSE(actual, expected, atol) ASSERT_TRUE(TensorsClose((actual), (expected), (atol)))
