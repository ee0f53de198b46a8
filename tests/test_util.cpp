#include "test_util.h"
#include <torch/csrc/autograd/autograd.h>
#include <torch/csrc/autograd/function.h>

#include "swarmt/core/remove_tree.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <unordered_set>

namespace fs = std::filesystem;

namespace swarmt::testing {

TempDir::TempDir() {
  std::random_device rd;
  for (int attempt = 0; attempt < 100; ++attempt) {
    fs::path p = fs::temp_directory_path() / ("swarmt_test_" + std::to_string(getpid()) + "_" + std::to_string(rd()));
    std::error_code ec;
    if (fs::create_directory(p, ec)) {
      path_ = p.string();
      return;
    }
  }
  throw std::runtime_error("cannot create a temporary directory");
}

TempDir::~TempDir() { remove_tree(path_); }

static std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

CommandResult run_shell(const std::string& command) {
  TempDir tmp;
  std::string out = tmp.file("out"), err = tmp.file("err");
  std::string full = "(" + command + ") >" + out + " 2>" + err;
  int status = std::system(full.c_str());
  CommandResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

CommandResult run_swarmt(const std::string& args) {
  return run_shell(std::string("OMP_NUM_THREADS=1 ") + SWARMT_BINARY + " --threads 1 " + args);
}

std::string test_data(const std::string& name) { return std::string(SWARMT_TEST_DATA_DIR) + "/" + name; }

std::string fixtures_dir() {
  const char* env = std::getenv("SWARMT_FIXTURES_DIR");
  std::string dir = env ? env : SWARMT_FIXTURES_DIR;
  return fs::exists(dir) ? dir : std::string();
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace swarmt::testing

::testing::AssertionResult TensorsClose(const at::Tensor& actual, const at::Tensor& expected, double atol,
                                        double rtol) {
  if (actual.sizes() != expected.sizes()) {
    return ::testing::AssertionFailure() << "shape mismatch: actual " << actual.sizes() << " vs expected "
                                         << expected.sizes();
  }
  if (actual.numel() == 0) return ::testing::AssertionSuccess();
  auto a = actual.detach().to(at::kDouble).contiguous().view(-1);
  auto e = expected.detach().to(at::kDouble).contiguous().view(-1);
  auto diff = (a - e).abs();
  auto tol = atol + rtol * e.abs();
  auto bad = (diff > tol).logical_or(diff.isnan());
  if (!bad.any().item<bool>()) return ::testing::AssertionSuccess();
  int64_t worst = diff.nan_to_num(1e300).argmax().item<int64_t>();
  auto result = ::testing::AssertionFailure();
  result << "max |diff| = " << diff[worst].item<double>() << " at flat index " << worst << " (actual "
         << a[worst].item<double>() << ", expected " << e[worst].item<double>() << "), "
         << bad.sum().item<int64_t>() << " of " << a.numel() << " elements beyond atol " << atol << " rtol "
         << rtol << "; first values actual/expected:";
  for (int64_t i = 0; i < std::min<int64_t>(5, a.numel()); ++i)
    result << " " << a[i].item<double>() << "/" << e[i].item<double>();
  return result;
}

bool AutogradGraphHas(const at::Tensor& t, const std::string& name) {
  std::vector<torch::autograd::Node*> stack;
  std::unordered_set<torch::autograd::Node*> seen;
  if (t.grad_fn()) stack.push_back(t.grad_fn().get());
  while (!stack.empty()) {
    torch::autograd::Node* node = stack.back();
    stack.pop_back();
    if (!seen.insert(node).second) continue;
    if (node->name().find(name) != std::string::npos) return true;
    for (const auto& edge : node->next_edges())
      if (edge.function) stack.push_back(edge.function.get());
  }
  return false;
}

at::Tensor SeededRandn(at::IntArrayRef shape, uint64_t seed) {
  at::Generator gen = at::detail::createCPUGenerator(seed);
  return at::randn(shape, gen, at::TensorOptions().dtype(at::kFloat));
}

std::vector<at::Tensor> GradientsOf(const at::Tensor& y, const std::vector<at::Tensor>& inputs,
                                    const at::Tensor& upstream) {
  return torch::autograd::grad({y}, inputs, {upstream.to(y.scalar_type())}, /*retain_graph=*/false,
                               /*create_graph=*/false, /*allow_unused=*/true);
}
