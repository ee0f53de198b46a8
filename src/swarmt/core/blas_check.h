// Making sure the BLAS that libtorch calls runs the kernels this CPU supports.
//
// Debian's libtorch calls the system libblas.so.3. Without OpenBLAS that is the reference BLAS (~4
// GFLOP/s fp32). With OpenBLAS 0.3.21 on AVX-512 CPUs it often picks a weaker core ("Prescott" or
// "Haswell": 63-120 GFLOP/s) although OPENBLAS_CORETYPE=SKYLAKEX on the same library reaches 180-320.
// OpenBLAS reads OPENBLAS_CORETYPE once, when it is loaded, so the only way to change the core of a
// running program is to restart it: ensure_best_blas_kernels() re-executes the program once with the
// matching core type, and the restarted process verifies a small GEMM against a plain reference before
// trusting it (falling back to the original core if it disagrees).
#pragma once

#include <string>

namespace swarmt {

struct CpuFeatures {
  bool avx2 = false;
  bool fma = false;
  bool avx512f = false;
  bool avx512bw = false;
  bool avx512vl = false;
  bool avx512dq = false;
  bool avx512_bf16 = false;
  bool os_saves_avx512 = false;  // XCR0 has the opmask/ZMM state bits: the OS lets us use AVX-512
  std::string summary() const;   // e.g. "avx2 fma avx512f avx512bw avx512vl avx512dq avx512_bf16"
};

CpuFeatures detect_cpu_features();

struct BlasReport {
  std::string library;          // shared object that provides sgemm_ (resolved path)
  bool is_openblas = false;
  bool is_reference = false;    // the netlib reference BLAS (slow)
  std::string corename;         // what OpenBLAS runs now (openblas_get_corename), "" if not OpenBLAS
  std::string original_core;    // what OpenBLAS chose by itself before swarmt switched, if it switched
  std::string coretype_env;     // OPENBLAS_CORETYPE as seen by this process ("" if unset)
  bool switched = false;        // this process was restarted with a better OPENBLAS_CORETYPE
  bool switch_rejected = false; // the switched core failed the GEMM check and swarmt fell back
  bool user_override = false;   // the user set OPENBLAS_CORETYPE; swarmt left it alone
  double gemm_check_error = 0;  // max relative error of the verification GEMM (when verified)
  std::string describe() const; // one line for `swarmt info --system`
};

// The OpenBLAS core name that matches the CPU's vector extensions ("SKYLAKEX", "HASWELL", ...), or ""
// if nothing better than the default is known.
std::string best_openblas_coretype(const CpuFeatures& cpu);

// True if `corename` (as returned by openblas_get_corename, any case) is weaker than `wanted`.
bool openblas_core_is_weaker(const std::string& corename, const std::string& wanted);

// Called first thing in main(). May replace the process (execv) once, also to make OpenMP workers wait
// passively (OMP_WAIT_POLICY=PASSIVE unless the user set a policy) and OpenBLAS's workers sleep after
// 2^16 cycles instead of 2^28 (OPENBLAS_THREAD_TIMEOUT=16 unless the user set it); never returns an
// error. Set SWARMT_NO_BLAS_SWITCH=1 to disable all three. Prints a one-line warning to stderr if the BLAS in use is the slow
// reference implementation.
void ensure_best_blas_kernels(int argc, char** argv);

// What is loaded now (cheap; no restart).
BlasReport current_blas_report();

// Max relative error of a 96x80x72 sgemm through the loaded BLAS against a plain double loop.
// Returns a negative value if no sgemm_ symbol is available.
double verify_blas_gemm();

}  // namespace swarmt
