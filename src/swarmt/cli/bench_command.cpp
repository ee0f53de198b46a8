// `swarmt bench`: the group, and `swarmt bench gemm`.
//
//   swarmt bench gemm [--size N] [--seconds S] [--json] [--out FILE.safetensors]
//       GFLOP/s of an N x N x N fp32 matmul through libtorch (and the BLAS it calls). With --out, also
//       computes C = A·B of seeded inputs (the same on every machine and build) and saves "a", "b", "c".
//   swarmt bench gemm --compare A.safetensors B.safetensors
//       Exit 0 if the two products agree to fp32 rounding, 2 (with the worst element) otherwise: used to
//       check that a faster BLAS core computes what the generic kernels compute.
#include "swarmt/cli/bench_command.h"

#include <cmath>
#include <iostream>
#include <memory>
#include <random>

#include "swarmt/core/blas_check.h"
#include "swarmt/core/error.h"
#include "swarmt/core/json.h"
#include "swarmt/core/safetensors_torch.h"
#include "swarmt/ops/gemm_rate.h"

namespace swarmt::cli {
namespace {

struct BenchGemmOptions {
  int size = 1024;
  double seconds = 1.0;
  bool json = false;
  std::string out;
  std::vector<std::string> compare;
};

// n x n fp32 values uniform in [-1, 1), from the raw bits of mt19937 (whose sequence the C++ standard
// fixes, unlike the distributions), so every build and machine computes the same problem.
at::Tensor seeded_matrix(int n, uint32_t seed) {
  std::mt19937 rng(seed);
  at::Tensor m = at::empty({n, n}, at::kFloat);
  float* p = m.data_ptr<float>();
  for (int64_t i = 0; i < int64_t(n) * n; ++i) p[i] = static_cast<float>(rng() >> 8) * (2.0f / 16777216.0f) - 1.0f;
  return m;
}

at::Tensor load_matrix(const TensorStore& store, const std::string& name) {
  SWARMT_CHECK_INPUT(store.has(name), store.path(), ": no tensor named '", name, "' (not written by bench gemm --out?)");
  at::Tensor t = store.get(name);
  SWARMT_CHECK_INPUT(t.dim() == 2 && t.scalar_type() == at::kFloat, store.path(), ": tensor '", name,
                     "' must be a 2-D F32 matrix");
  return t;
}

// Any correct fp32 dot product of length k satisfies |c - exact| <= gamma_k * sum|a_i b_i| with
// gamma_k = k u / (1 - k u), u = 2^-24 (Higham, Accuracy and Stability, §3.1). Two of them differ by at
// most twice that: the bound holds for every blocking and FMA use, and a wrong kernel breaks it.
int compare_products(const BenchGemmOptions& opts) {
  const TensorStore first = TensorStore::open(opts.compare[0]);
  const TensorStore second = TensorStore::open(opts.compare[1]);
  for (const char* input : {"a", "b"}) {
    SWARMT_CHECK_INPUT(at::equal(load_matrix(first, input), load_matrix(second, input)), opts.compare[0], " and ",
                       opts.compare[1], ": input '", input, "' differs, so the products are not comparable");
  }
  const at::Tensor a = load_matrix(first, "a").to(at::kDouble), b = load_matrix(first, "b").to(at::kDouble);
  const at::Tensor c1 = load_matrix(first, "c").to(at::kDouble), c2 = load_matrix(second, "c").to(at::kDouble);
  SWARMT_CHECK_INPUT(a.size(1) == b.size(0) && c1.sizes() == c2.sizes() && c1.size(0) == a.size(0) &&
                         c1.size(1) == b.size(1),
                     opts.compare[0], " and ", opts.compare[1], ": shapes of a, b, c do not form a product");
  const double k = static_cast<double>(a.size(1)), u = std::ldexp(1.0, -24);
  const double bound = 2.0 * k * u / (1.0 - k * u);
  const at::Tensor magnitude = at::mm(a.abs(), b.abs());        // sum_i |a_i b_i| per element
  const at::Tensor relative = (c1 - c2).abs() / magnitude.clamp_min(1e-300);
  const int64_t worst = relative.argmax().item<int64_t>();
  const double worst_relative = relative.view(-1)[worst].item<double>();
  const bool agree = worst_relative <= bound;
  if (opts.json) {
    std::cout << Json{{"agree", agree}, {"max_relative_difference", worst_relative}, {"bound", bound}}.dump(2) << std::endl;
  } else if (agree) {
    std::cout << "c agrees: max |difference| / magnitude = " << worst_relative << " (fp32 bound " << bound << ")"
              << std::endl;
  }
  if (agree) return 0;
  const int64_t row = worst / c1.size(1), col = worst % c1.size(1);
  std::cerr << "error: " << opts.compare[0] << " and " << opts.compare[1] << ": 'c' differs beyond fp32 rounding at ["
            << row << ", " << col << "]: " << c1[row][col].item<double>() << " vs " << c2[row][col].item<double>()
            << " (|difference| / magnitude = " << worst_relative << ", bound " << bound << ")" << std::endl;
  return 2;
}

int run_bench_gemm(const BenchGemmOptions& opts) {
  if (!opts.compare.empty()) return compare_products(opts);
  SWARMT_CHECK_INPUT(opts.size >= 1 && opts.size <= 16384, "--size must be in [1, 16384] (got ", opts.size, ")");
  SWARMT_CHECK_INPUT(opts.seconds > 0 && opts.seconds <= 600, "--seconds must be in (0, 600] (got ", opts.seconds, ")");
  const double gflops = measure_gemm_gflops(opts.size, opts.seconds);
  const BlasReport blas = current_blas_report();
  if (!opts.out.empty()) {
    at::Tensor a = seeded_matrix(opts.size, 1), b = seeded_matrix(opts.size, 2);
    at::Tensor c = at::mm(a, b);
    save_safetensors(opts.out, {{"a", a}, {"b", b}, {"c", c}},
                     {{"producer", "swarmt bench gemm"}, {"openblas_core", blas.corename}});
  }
  if (opts.json) {
    Json out = {{"benchmark", "gemm"},       {"size", opts.size},     {"dtype", "F32"},
                {"gflops", gflops},          {"threads", at::get_num_threads()},
                {"blas", blas.describe()},   {"openblas_core", blas.corename}};
    if (!opts.out.empty()) out["out"] = opts.out;
    std::cout << out.dump(2) << std::endl;
  } else {
    std::cout << "fp32 gemm " << opts.size << "x" << opts.size << "x" << opts.size << ": " << gflops << " GFLOP/s ("
              << at::get_num_threads() << " threads; " << blas.describe() << ")" << std::endl;
    if (!opts.out.empty()) std::cout << "wrote a, b, c = a·b to " << opts.out << std::endl;
  }
  return 0;
}

}  // namespace

void register_bench_gemm(CLI::App& bench, const GlobalOptions& globals, CommandList& commands) {
  auto opts = std::make_shared<BenchGemmOptions>();
  CLI::App* cmd = bench.add_subcommand("gemm", "fp32 GEMM rate (GFLOP/s); reproducible products to compare BLAS kernels");
  cmd->add_option("--size", opts->size, "Matrix size N of the N x N x N product")->capture_default_str();
  cmd->add_option("--seconds", opts->seconds, "Minimum time to measure")->capture_default_str();
  cmd->add_flag("--json", opts->json, "Machine-readable output");
  cmd->add_option("--out", opts->out, "Also save seeded inputs a, b and c = a·b to this .safetensors file");
  cmd->add_option("--compare", opts->compare, "Compare 'c' of two --out files: exit 0 if they agree to fp32 rounding")
      ->expected(2);
  commands.push_back({cmd, [opts]() { return run_bench_gemm(*opts); }});
}

void register_bench(CLI::App& app, const GlobalOptions& globals, CommandList& commands) {
  CLI::App* bench = app.add_subcommand("bench", "Benchmarks: kernels and models against the machine's GEMM rate");
  bench->require_subcommand(1);
  register_bench_gemm(*bench, globals, commands);
  register_bench_kernels(*bench, globals, commands);
  register_bench_memory(*bench, globals, commands);
  register_bench_peak(*bench, globals, commands);
}

}  // namespace swarmt::cli
