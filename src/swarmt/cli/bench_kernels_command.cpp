// `swarmt bench kernels`: the sequence-mixing kernels against sequence length, next to the machine's GEMM
// rate measured in the same run.
//
//   swarmt bench kernels [--lengths 1k,4k,16k,64k] [--kernels swa,full,mlstm,gdn] [--max-full 16k]
//                        [--chunks 64] [--heads H] [--dqk D] [--dv D] [--window W] [--json FILE]
//
// Shapes (batch 1, fp32), unless given: attention H = 8, D = 64 (--dqk; SWA window 128, block 64); mLSTM
// H = 4, Dqk = 128, Dv = 256; Gated DeltaNet H = 4, Dk = 128, Dv = 128; the recurrent kernels at every
// chunk size of --chunks (the trade-off between small per-chunk products and the quadratic intra-chunk
// work). Per (kernel, N): forward and forward+backward milliseconds (best of up to 5 runs after a
// warm-up, within about a second); GFLOP/s of forward+backward counting only the FLOPs the algorithm
// needs (ops/flops.h, ops/recurrent_flops.h), as a fraction of the fp32 FMA peak and of the GEMM rate
// measured at the start of the same run; GB/s of the bytes it must move at least (every input and output
// once; backward: the inputs again, the output's gradient and the inputs' gradients) as a fraction of the
// read bandwidth measured then; and the peak memory the case added to the process. Each case runs in its
// own child process (this executable, re-run with --case), so peak RSS is the case's own and nothing
// freed by an earlier case is counted or hidden.
#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include "swarmt/cli/bench_command.h"
#include "swarmt/cli/cli_util.h"
#include "swarmt/core/error.h"
#include "swarmt/core/json.h"
#include "swarmt/core/memory_usage.h"
#include "swarmt/ops/attention.h"
#include "swarmt/ops/compute_peak.h"
#include "swarmt/ops/flops.h"
#include "swarmt/ops/gated_delta.h"
#include "swarmt/ops/gemm_rate.h"
#include "swarmt/ops/memory_bandwidth.h"
#include "swarmt/ops/mlstm.h"
#include "swarmt/ops/recurrent_flops.h"
#include "swarmt/report/markdown_table.h"

namespace swarmt::cli {
namespace {

struct KernelsOptions {
  std::string lengths = "1k,4k,16k,64k";
  std::string kernels = "swa,full,mlstm,gdn";
  std::string max_full = "16k";
  std::string chunks = "64";
  std::string json_out;
  std::string one_case;  // internal: "kernel:n:chunk", run by the child process
  double seconds = 1.0;
  bool quiet = false;
  int64_t heads = 0, dqk = 0, dv = 0, window = 0;  // 0: each kernel's default shape
};

// The shapes of one run: the defaults above where an option is 0.
struct KernelShapes {
  int64_t attention_heads, attention_dim, window;
  int64_t mlstm_heads, mlstm_qk, mlstm_v;
  int64_t gdn_heads, gdn_k, gdn_v;
};

KernelShapes shapes_of(const KernelsOptions& o) {
  auto pick = [](int64_t given, int64_t fallback) { return given > 0 ? given : fallback; };
  return {pick(o.heads, 8), pick(o.dqk, 64),  pick(o.window, 128), pick(o.heads, 4), pick(o.dqk, 128),
          pick(o.dv, 256),  pick(o.heads, 4), pick(o.dqk, 128),    pick(o.dv, 128)};
}

void check_shape_options(const KernelsOptions& o) {
  for (const auto& [name, value] : {std::pair<const char*, int64_t>{"--heads", o.heads}, {"--dqk", o.dqk},
                                    {"--dv", o.dv}, {"--window", o.window}})
    SWARMT_CHECK_INPUT(value >= 0 && value <= 4096, name, " must be in 1..4096 (0: the default), got ", value);
}

// Bytes of fp32 values forward + backward must move at least: each input and output once forward; the
// backward reads the inputs and the output's gradient again and writes the inputs' gradients.
double min_fwdbwd_bytes(double input_values, double output_values) {
  return 4.0 * (3.0 * input_values + 2.0 * output_values);
}

// Milliseconds of `f`: best of up to 5 runs after one warm-up, stopping once `seconds` have been spent.
template <typename F>
double time_ms(F&& f, double seconds) {
  f();
  double best = 1e300, spent = 0;
  for (int run = 0; run < 5 && (run == 0 || spent < seconds); ++run) {
    const auto start = std::chrono::steady_clock::now();
    f();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    best = std::min(best, s);
    spent += s;
  }
  return best * 1e3;
}

struct CaseResult {
  double fwd_ms = 0, fwdbwd_ms = 0, flops_fwd = 0, flops_total = 0;
  double bytes = 0;  // min_fwdbwd_bytes
};

void clear_grads(std::initializer_list<at::Tensor*> tensors) {
  for (at::Tensor* t : tensors) t->mutable_grad().reset();
}

CaseResult run_attention(int64_t n, int64_t window, const KernelShapes& s, double seconds) {
  const int64_t heads = s.attention_heads, dim = s.attention_dim;
  ops::AttentionOptions options;
  options.window = window;
  auto q = at::randn({1, heads, n, dim}).requires_grad_(true);
  auto k = at::randn({1, heads, n, dim}).requires_grad_(true);
  auto v = at::randn({1, heads, n, dim}).requires_grad_(true);
  auto upstream = at::randn({1, heads, n, dim});
  CaseResult r;
  r.fwd_ms = time_ms([&] {
    at::NoGradGuard no_grad;
    ops::causal_attention(q, k, v, options);
  }, seconds);
  r.fwdbwd_ms = time_ms([&] {
    ops::causal_attention(q, k, v, options).backward(upstream);
    clear_grads({&q, &k, &v});
  }, seconds);
  r.flops_fwd = ops::attention_forward_flops(1, heads, n, n, dim, window);
  r.flops_total = r.flops_fwd + ops::attention_backward_flops(1, heads, n, n, dim, window);
  r.bytes = min_fwdbwd_bytes(3.0 * heads * n * dim, 1.0 * heads * n * dim);
  return r;
}

CaseResult run_mlstm(int64_t n, int64_t chunk, const KernelShapes& s, double seconds) {
  const int64_t heads = s.mlstm_heads, qk = s.mlstm_qk, vd = s.mlstm_v;
  ops::MLSTMOptions options;
  options.chunk_size = chunk;
  auto q = at::randn({1, heads, n, qk}).requires_grad_(true);
  auto k = at::randn({1, heads, n, qk}).requires_grad_(true);
  auto v = at::randn({1, heads, n, vd}).requires_grad_(true);
  auto ig = at::randn({1, heads, n}).requires_grad_(true);
  auto fg = (at::randn({1, heads, n}) + 3.0).requires_grad_(true);
  auto upstream = at::randn({1, heads, n, vd});
  CaseResult r;
  r.fwd_ms = time_ms([&] {
    at::NoGradGuard no_grad;
    ops::mlstm_chunkwise(q, k, v, ig, fg, std::nullopt, options);
  }, seconds);
  r.fwdbwd_ms = time_ms([&] {
    ops::mlstm_chunkwise(q, k, v, ig, fg, std::nullopt, options).first.backward(upstream);
    clear_grads({&q, &k, &v, &ig, &fg});
  }, seconds);
  const auto flops = ops::mlstm_chunkwise_flops(1, heads, n, qk, vd, chunk);
  r.flops_fwd = flops.forward;
  r.flops_total = flops.total();
  r.bytes = min_fwdbwd_bytes(1.0 * heads * n * (2 * qk + vd + 2), 1.0 * heads * n * vd);
  return r;
}

CaseResult run_gdn(int64_t n, int64_t chunk, const KernelShapes& s, double seconds) {
  const int64_t heads = s.gdn_heads, dk = s.gdn_k, dv = s.gdn_v;
  ops::GatedDeltaOptions options;
  options.chunk_size = chunk;
  auto unit = [](const at::Tensor& x) { return x / at::sqrt((x * x).sum(-1, true) + 1e-6); };
  auto q = unit(at::randn({1, heads, n, dk})).requires_grad_(true);
  auto k = unit(at::randn({1, heads, n, dk})).requires_grad_(true);
  auto v = at::randn({1, heads, n, dv}).requires_grad_(true);
  auto beta = at::sigmoid(at::randn({1, heads, n})).requires_grad_(true);
  auto g = (-at::softplus(at::randn({1, heads, n})) * 0.1).requires_grad_(true);
  auto upstream = at::randn({1, heads, n, dv});
  CaseResult r;
  r.fwd_ms = time_ms([&] {
    at::NoGradGuard no_grad;
    ops::gated_delta_chunkwise(q, k, v, beta, g, std::nullopt, options);
  }, seconds);
  r.fwdbwd_ms = time_ms([&] {
    ops::gated_delta_chunkwise(q, k, v, beta, g, std::nullopt, options).first.backward(upstream);
    clear_grads({&q, &k, &v, &beta, &g});
  }, seconds);
  const auto flops = ops::gated_delta_chunkwise_flops(1, heads, n, dk, dv, chunk);
  r.flops_fwd = flops.forward;
  r.flops_total = flops.total();
  r.bytes = min_fwdbwd_bytes(1.0 * heads * n * (2 * dk + dv + 2), 1.0 * heads * n * dv);
  return r;
}

bool is_recurrent(const std::string& kernel) { return kernel == "mlstm" || kernel == "gdn"; }

// The child: one case, one JSON line on stdout.
int run_one_case(const std::string& spec, const KernelShapes& shapes, double seconds) {
  const auto first = spec.find(':'), second = spec.rfind(':');
  SWARMT_CHECK_INPUT(first != std::string::npos && second > first && second + 1 < spec.size(),
                     "--case: expected KERNEL:N:CHUNK, got '", spec, "'");
  const std::string kernel = spec.substr(0, first);
  const int64_t n = parse_lengths(spec.substr(first + 1, second - first - 1), "--case").at(0);
  const std::string chunk_text = spec.substr(second + 1);
  SWARMT_CHECK_INPUT(chunk_text.find_first_not_of("0123456789") == std::string::npos && chunk_text.size() <= 4,
                     "--case: the chunk size must be a number, got '", chunk_text, "'");
  const int64_t chunk = std::stoll(chunk_text);
  SWARMT_CHECK_INPUT(!is_recurrent(kernel) || chunk >= 1, "--case: a recurrent kernel needs a chunk size >= 1");
  const int64_t baseline = current_rss_bytes();
  reset_peak_rss();
  CaseResult r;
  if (kernel == "swa") r = run_attention(n, shapes.window, shapes, seconds);
  else if (kernel == "full") r = run_attention(n, 0, shapes, seconds);
  else if (kernel == "mlstm") r = run_mlstm(n, chunk, shapes, seconds);
  else if (kernel == "gdn") r = run_gdn(n, chunk, shapes, seconds);
  else throw_input_error("--kernels: unknown kernel '", kernel, "' (swa, full, mlstm, gdn)");
  const double peak_mb = static_cast<double>(peak_rss_since_reset_bytes() - baseline) / (1024.0 * 1024.0);
  Json out{{"kernel", kernel},
           {"n", n},
           {"window", kernel == "swa" ? shapes.window : 0},
           {"chunk", is_recurrent(kernel) ? chunk : 0},
           {"fwd_ms", r.fwd_ms},
           {"fwdbwd_ms", r.fwdbwd_ms},
           {"fwd_gflops", r.flops_fwd / (r.fwd_ms * 1e-3) / 1e9},
           {"gflops", r.flops_total / (r.fwdbwd_ms * 1e-3) / 1e9},
           {"gb_s", r.bytes / (r.fwdbwd_ms * 1e-3) / 1e9},
           {"peak_mb", peak_mb}};
  std::cout << out.dump() << std::endl;
  return 0;
}

// Runs `swarmt bench kernels --case K:N:L` in a fresh process and parses its one JSON line.
Json run_child(const std::string& kernel, int64_t n, int64_t chunk, const KernelsOptions& o) {
  return run_self_for_json(str_cat("-q bench kernels --case ", kernel, ":", n, ":", chunk, " --seconds ", o.seconds,
                                   " --heads ", o.heads, " --dqk ", o.dqk, " --dv ", o.dv, " --window ", o.window),
                           str_cat("bench kernels: the case ", kernel, ":", n, ":", chunk));
}

int run_kernels(const KernelsOptions& o) {
  SWARMT_CHECK_INPUT(o.seconds > 0 && o.seconds <= 600, "--seconds must be in (0, 600]");
  check_shape_options(o);
  const KernelShapes shapes = shapes_of(o);
  if (!o.one_case.empty()) return run_one_case(o.one_case, shapes, o.seconds);
  const std::vector<int64_t> lengths = parse_lengths(o.lengths, "--lengths");
  const auto kernels = split_list(o.kernels);
  for (const auto& k : kernels)
    SWARMT_CHECK_INPUT(k == "swa" || k == "full" || k == "mlstm" || k == "gdn", "--kernels: unknown kernel '", k,
                       "' (swa, full, mlstm, gdn)");
  const int64_t max_full = parse_lengths(o.max_full, "--max-full").at(0);
  const std::vector<int64_t> chunks = parse_lengths(o.chunks, "--chunks");
  for (int64_t c : chunks)
    SWARMT_CHECK_INPUT(c >= 1 && c <= 1024, "--chunks: a chunk size must be in [1, 1024], got ", c);

  const double gemm = measure_gemm_gflops(2048, 1.0);
  const double fma = ops::measure_compute_peak(at::get_num_threads(), 0.5).fp32_fma_gflops;
  const double read = measure_read_bandwidth(int64_t(512) << 20);
  if (!o.quiet)
    std::cerr << "fp32 FMA peak " << format_fixed(fma, 1) << " GFLOP/s, GEMM " << format_fixed(gemm, 1)
              << " GFLOP/s, read " << format_fixed(read, 1) << " GB/s (" << at::get_num_threads() << " threads)\n";
  Json results = Json::array();
  MarkdownTable table({"kernel", "N", "chunk", "fwd ms", "fwd+bwd ms", "GFLOP/s", "% of FMA peak", "% of GEMM",
                       "GB/s", "% of read", "peak MB"});
  for (const auto& kernel : kernels) {
    for (int64_t n : lengths) {
      if (kernel == "full" && n > max_full) {
        if (!o.quiet) std::cerr << "skip full attention at N = " << n << " (quadratic; raise --max-full to run it)\n";
        continue;
      }
      for (int64_t chunk : is_recurrent(kernel) ? chunks : std::vector<int64_t>{0}) {
        if (!o.quiet) std::cerr << "running " << kernel << " N = " << n << (chunk ? str_cat(" chunk ", chunk) : "")
                                << " ..." << std::endl;
        Json r = run_child(kernel, n, chunk, o);
        const double g = r["gflops"].get<double>(), gb = r["gb_s"].get<double>();
        r["fma_peak_fraction"] = g / fma;
        r["read_fraction"] = gb / read;
        results.push_back(r);
        table.add_row({kernel, std::to_string(n), chunk ? std::to_string(chunk) : "-",
                       format_fixed(r["fwd_ms"].get<double>(), 2), format_fixed(r["fwdbwd_ms"].get<double>(), 2),
                       format_fixed(g, 1), format_fixed(100.0 * g / fma, 1), format_fixed(100.0 * g / gemm, 1),
                       format_fixed(gb, 1), format_fixed(100.0 * gb / read, 1),
                       format_fixed(r["peak_mb"].get<double>(), 1)});
      }
    }
  }
  std::cout << table.render();
  if (!o.json_out.empty()) {
    Json out{{"gemm_gflops", gemm},
             {"fma_peak_gflops", fma},
             {"read_gb_s", read},
             {"threads", at::get_num_threads()},
             {"shapes", {{"attention_heads", shapes.attention_heads}, {"attention_dim", shapes.attention_dim},
                         {"window", shapes.window}, {"mlstm_heads", shapes.mlstm_heads}, {"mlstm_qk", shapes.mlstm_qk},
                         {"mlstm_v", shapes.mlstm_v}, {"gdn_heads", shapes.gdn_heads}, {"gdn_k", shapes.gdn_k},
                         {"gdn_v", shapes.gdn_v}}},
             {"results", results}};
    std::ofstream f(o.json_out);
    SWARMT_CHECK_INPUT(f.good(), o.json_out, ": cannot write");
    f << out.dump(2) << "\n";
    SWARMT_CHECK_INPUT(f.good(), o.json_out, ": write failed");
    if (!o.quiet) std::cerr << "wrote " << o.json_out << "\n";
  }
  return 0;
}

}  // namespace

void register_bench_kernels(CLI::App& bench, const GlobalOptions& globals, CommandList& commands) {
  auto o = std::make_shared<KernelsOptions>();
  CLI::App* cmd = bench.add_subcommand("kernels", "SWA, full attention, mLSTM and GDN: time, GFLOP/s, memory vs N");
  cmd->add_option("--lengths", o->lengths, "Sequence lengths")->capture_default_str();
  cmd->add_option("--kernels", o->kernels, "Kernels to run")->capture_default_str();
  cmd->add_option("--max-full", o->max_full, "Longest N for full (quadratic) attention")->capture_default_str();
  cmd->add_option("--chunks,--chunk", o->chunks,
                  "Chunk sizes of the recurrent kernels (mlstm, gdn), each its own case")
      ->capture_default_str();
  cmd->add_option("--heads", o->heads, "Heads of every kernel (default: attention 8, mlstm and gdn 4)");
  cmd->add_option("--dqk", o->dqk, "Query/key head dim (default: attention 64, mlstm and gdn 128)");
  cmd->add_option("--dv", o->dv, "Value head dim of mlstm and gdn (default: mlstm 256, gdn 128)");
  cmd->add_option("--window", o->window, "Window of swa (default 128)");
  cmd->add_option("--seconds", o->seconds, "Time budget per measurement")->capture_default_str();
  cmd->add_option("--json", o->json_out, "Also write the results as JSON to this file");
  cmd->add_option("--case", o->one_case, "(internal) run one KERNEL:N:CHUNK case and print it as JSON")->group("");
  commands.push_back({cmd, [o, &globals]() {
                        o->quiet = globals.quiet;
                        return run_kernels(*o);
                      }});
}

}  // namespace swarmt::cli
