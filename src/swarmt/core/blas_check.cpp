#include "swarmt/core/blas_check.h"

#include "swarmt/core/blas_symbols.h"

#include <cpuid.h>
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

namespace swarmt {
namespace {

constexpr const char* kSwitchedFromEnv = "SWARMT_BLAS_SWITCHED_FROM";  // set on the restarted process
constexpr const char* kRejectedEnv = "SWARMT_BLAS_REJECTED";          // the switch failed verification
constexpr const char* kDisableEnv = "SWARMT_NO_BLAS_SWITCH";
constexpr const char* kBlasTimeoutEnv = "OPENBLAS_THREAD_TIMEOUT";  // log2 of the cycles its workers spin
constexpr const char* kBlasTimeoutExponent = "16";
constexpr const char* kOmpSpinEnv = "GOMP_SPINCOUNT";  // libgomp: spins before a waiting worker sleeps
constexpr const char* kOmpSpinCount = "10000";

std::string env_or_empty(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

std::string upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::toupper(c); });
  return s;
}

// OpenBLAS x86-64 cores in increasing order of capability (the subset that matters for sgemm).
int core_rank(const std::string& name) {
  static const char* order[] = {"PRESCOTT", "CORE2", "PENRYN", "DUNNINGTON", "NEHALEM", "ATOM",
                                "BARCELONA", "BOBCAT", "BULLDOZER", "PILEDRIVER", "STEAMROLLER",
                                "EXCAVATOR", "SANDYBRIDGE", "HASWELL", "ZEN", "SKYLAKEX", "COOPERLAKE",
                                "SAPPHIRERAPIDS"};
  std::string u = upper(name);
  for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); ++i)
    if (u == order[i]) return static_cast<int>(i);
  return -1;
}

using CoreNameFn = char* (*)();
std::string openblas_corename_now() {
  auto fn = reinterpret_cast<CoreNameFn>(dlsym(RTLD_DEFAULT, "openblas_get_corename"));
  if (!fn) return "";
  const char* name = fn();
  return name ? std::string(name) : std::string();
}

std::string library_of(void* sym) {
  Dl_info info;
  if (sym && dladdr(sym, &info) && info.dli_fname) {
    char resolved[4096];
    if (realpath(info.dli_fname, resolved)) return resolved;
    return info.dli_fname;
  }
  return "";
}

void restart_with(char** argv, const char* coretype, const char* marker_name, const char* marker_value) {
  setenv("OPENBLAS_CORETYPE", coretype, 1);
  setenv(marker_name, marker_value, 1);
  std::fflush(nullptr);
  execv("/proc/self/exe", argv);
  // execv only returns on failure: carry on with the current kernels.
}

}  // namespace

std::string CpuFeatures::summary() const {
  std::string s;
  auto add = [&](bool on, const char* name) {
    if (!on) return;
    if (!s.empty()) s += ' ';
    s += name;
  };
  add(avx2, "avx2");
  add(fma, "fma");
  add(avx512f, "avx512f");
  add(avx512bw, "avx512bw");
  add(avx512vl, "avx512vl");
  add(avx512dq, "avx512dq");
  add(avx512_bf16, "avx512_bf16");
  if (avx512f && !os_saves_avx512) s += " (AVX-512 state not enabled by the OS)";
  return s.empty() ? "none of avx2/avx512" : s;
}

CpuFeatures detect_cpu_features() {
  CpuFeatures f;
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid_count(1, 0, &a, &b, &c, &d)) return f;
  f.fma = (c >> 12) & 1;
  bool osxsave = (c >> 27) & 1;
  uint64_t xcr0 = 0;
  if (osxsave) {
    uint32_t lo = 0, hi = 0;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    xcr0 = (static_cast<uint64_t>(hi) << 32) | lo;
  }
  bool os_avx = (xcr0 & 0x6) == 0x6;
  f.os_saves_avx512 = (xcr0 & 0xE6) == 0xE6;
  if (__get_cpuid_count(7, 0, &a, &b, &c, &d)) {
    f.avx2 = os_avx && ((b >> 5) & 1);
    f.avx512f = (b >> 16) & 1;
    f.avx512dq = (b >> 17) & 1;
    f.avx512bw = (b >> 30) & 1;
    f.avx512vl = (b >> 31) & 1;
  }
  if (__get_cpuid_count(7, 1, &a, &b, &c, &d)) f.avx512_bf16 = (a >> 5) & 1;
  return f;
}

std::string best_openblas_coretype(const CpuFeatures& cpu) {
  if (cpu.os_saves_avx512 && cpu.avx512f && cpu.avx512bw && cpu.avx512vl && cpu.avx512dq) return "SKYLAKEX";
  if (cpu.avx2 && cpu.fma) return "HASWELL";
  return "";
}

bool openblas_core_is_weaker(const std::string& corename, const std::string& wanted) {
  int have = core_rank(corename), want = core_rank(wanted);
  if (want < 0) return false;
  // ZEN uses the Haswell kernels: for sgemm it is not stronger than HASWELL, but weaker than SKYLAKEX.
  if (upper(corename) == "ZEN" && upper(wanted) == "HASWELL") return false;
  return have < want;
}

double verify_blas_gemm() {
  SgemmFn sgemm = blas_sgemm();
  if (!sgemm) return -1.0;
  const int m = 96, n = 80, k = 72;
  std::mt19937 rng(1234);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  std::vector<float> A(m * k), B(k * n), C(m * n, 0.f);
  for (auto& x : A) x = dist(rng);
  for (auto& x : B) x = dist(rng);
  // Column-major: C(m x n) = A(m x k) * B(k x n).
  const float one = 1.f, zero = 0.f;
  sgemm("N", "N", &m, &n, &k, &one, A.data(), &m, B.data(), &k, &zero, C.data(), &m);
  double worst = 0.0;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      double ref = 0.0, mag = 0.0;
      for (int p = 0; p < k; ++p) {
        ref += static_cast<double>(A[i + p * m]) * B[p + j * k];
        mag += std::fabs(static_cast<double>(A[i + p * m]) * B[p + j * k]);
      }
      worst = std::max(worst, std::fabs(ref - C[i + j * m]) / (mag + 1e-30));
    }
  return worst;
}

BlasReport current_blas_report() {
  BlasReport r;
  SgemmFn sgemm = blas_sgemm();
  r.library = library_of(reinterpret_cast<void*>(sgemm));
  r.corename = openblas_corename_now();
  r.is_openblas = !r.corename.empty() || r.library.find("openblas") != std::string::npos;
  r.is_reference = !r.is_openblas && (r.library.find("/blas/") != std::string::npos ||
                                      r.library.find("libblas.so") != std::string::npos);
  r.coretype_env = env_or_empty("OPENBLAS_CORETYPE");
  r.original_core = env_or_empty(kSwitchedFromEnv);
  r.switched = !r.original_core.empty() && env_or_empty(kRejectedEnv).empty();
  r.switch_rejected = !env_or_empty(kRejectedEnv).empty();
  r.user_override = !r.coretype_env.empty() && r.original_core.empty() && !r.switch_rejected;
  return r;
}

std::string BlasReport::describe() const {
  std::string s = library.empty() ? std::string("no BLAS symbol found") : library;
  if (is_openblas) {
    s += " (OpenBLAS, core " + (corename.empty() ? std::string("?") : corename) + ")";
    if (switched) s += "; switched from " + original_core + " to match this CPU";
    if (switch_rejected) s += "; the faster core failed verification, kept " + corename;
    if (user_override) s += "; OPENBLAS_CORETYPE=" + coretype_env + " set by the user";
  } else if (is_reference) {
    s += " (reference BLAS: slow; install libopenblas0-pthread)";
  }
  return s;
}

void ensure_best_blas_kernels(int argc, char** argv) {
  (void)argc;
  const bool disabled = !env_or_empty(kDisableEnv).empty();
  std::string switched_from = env_or_empty(kSwitchedFromEnv);
  BlasReport report = current_blas_report();

  if (!switched_from.empty() && env_or_empty(kRejectedEnv).empty()) {
    // We are the restarted process: trust the new core only if a GEMM agrees with the reference.
    double err = verify_blas_gemm();
    if (err < 0 || err > 1e-4) {
      std::fprintf(stderr, "warning: OpenBLAS core %s failed a GEMM check (rel. error %.2g); using %s\n",
                   report.corename.c_str(), err, switched_from.c_str());
      restart_with(argv, switched_from.c_str(), kRejectedEnv, "1");
    }
    return;
  }
  if (report.is_reference) {
    std::fprintf(stderr,
                 "warning: BLAS is the slow reference implementation (%s); run `make setup` or install "
                 "libopenblas0-pthread\n",
                 report.library.c_str());
    return;
  }
  // OpenMP workers that spin while they wait (libgomp's default) steal the core that the thread they wait
  // for needs whenever anything else runs on the machine: on 2 cores, training the demo model ran at
  // 3.6k tokens/s spinning and 8.7k-10.7k tokens/s with passive waiting. libgomp reads the policy once, at
  // load, so it is set here, before the one restart; a user's own OMP_WAIT_POLICY is kept.
  const bool set_wait_policy = !disabled && env_or_empty("OMP_WAIT_POLICY").empty();
  if (set_wait_policy) setenv("OMP_WAIT_POLICY", "PASSIVE", 1);
  // Passive, but not at once: a worker first spins kOmpSpinCount times (libgomp's GOMP_SPINCOUNT, each
  // spin one `pause`: ~0.1 ms on a Xeon with 10 ns pauses, up to ~0.4 ms where a pause is 140 cycles),
  // then sleeps. A training step opens hundreds of parallel regions a few tens of microseconds apart, and
  // a worker that sleeps between them is woken by a futex each time while the caller starts alone.
  // Measured in one run, 3 interleaved rounds of `swarmt train` (30 steps of 815ca28's demo config):
  // 23.1k -> 26.8k tokens/s with 10^4 spins (a sweep the same hour: 3·10^4 26.7-26.9k, 10^5 27.3-27.4k).
  // The binary of 815ca28, whose linears are OpenBLAS's, went 10.8k -> 13.9k: the short spin does not
  // take OpenBLAS's cores the way libgomp's default of 3·10^5 spins did (7.7k). A 512-token bf16 prefill
  // of a 360M model: 904-908 -> 1158-1184 tokens/s; decode within noise. Set only with the policy set
  // here: a user's own policy or spin count is kept.
  const bool set_spin = set_wait_policy && env_or_empty(kOmpSpinEnv).empty();
  if (set_spin) setenv(kOmpSpinEnv, kOmpSpinCount, 1);
  // OpenBLAS's own workers spin for 2^28 cycles (~0.1 s) after each GEMM before they sleep. In a bf16
  // prefill the projections are oneDNN's GEMMs on the OpenMP threads and OpenBLAS computes only the
  // attention's fp32 products, so its spinning worker took a core from them: a 512-token bf16 prefill of
  // a 360M model ran at 343-385 tokens/s with the default and 369-542 with 2^16 cycles (3 interleaved
  // runs), training the demo model within noise of the default (9.4-9.7k against 9.0-10.4k tokens/s).
  // Read once at load, as the wait policy; a user's own value is kept.
  const bool set_blas_timeout = !disabled && report.is_openblas && env_or_empty(kBlasTimeoutEnv).empty();
  if (set_blas_timeout) setenv(kBlasTimeoutEnv, kBlasTimeoutExponent, 1);
  std::string wanted;
  if (!disabled && report.is_openblas && report.coretype_env.empty() && !report.corename.empty()) {
    wanted = best_openblas_coretype(detect_cpu_features());
    if (!wanted.empty() && !openblas_core_is_weaker(report.corename, wanted)) wanted.clear();
  }
  if (!wanted.empty()) {
    restart_with(argv, wanted.c_str(), kSwitchedFromEnv, report.corename.c_str());
  } else if (set_wait_policy || set_spin || set_blas_timeout) {
    std::fflush(nullptr);
    execv("/proc/self/exe", argv);  // returns only on failure: carry on spinning
  }
}

}  // namespace swarmt
