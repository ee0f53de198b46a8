// The Fortran BLAS GEMMs that libtorch itself calls, found at run time.
//
// libtorch links the system BLAS but does not export a raw-pointer GEMM; swarmt's own CPU kernels call
// sgemm_/dgemm_ of that same library (so they run the same cores, threads and OPENBLAS_CORETYPE), found
// by symbol so that the build needs no BLAS development files. Null when no BLAS provides them.
#pragma once

namespace swarmt {

using SgemmFn = void (*)(const char* transa, const char* transb, const int* m, const int* n, const int* k,
                         const float* alpha, const float* a, const int* lda, const float* b, const int* ldb,
                         const float* beta, float* c, const int* ldc);
using DgemmFn = void (*)(const char* transa, const char* transb, const int* m, const int* n, const int* k,
                         const double* alpha, const double* a, const int* lda, const double* b, const int* ldb,
                         const double* beta, double* c, const int* ldc);

SgemmFn blas_sgemm();
DgemmFn blas_dgemm();

}  // namespace swarmt
