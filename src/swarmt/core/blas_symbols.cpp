#include "swarmt/core/blas_symbols.h"

#include <dlfcn.h>

namespace swarmt {
namespace {

void* find_blas_symbol(const char* name) {
  void* sym = dlsym(RTLD_DEFAULT, name);
  if (!sym) {
    // libtorch links libblas lazily into its own namespace; try to open the system BLAS directly.
    void* handle = dlopen("libblas.so.3", RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD);
    if (!handle) handle = dlopen("libblas.so.3", RTLD_NOW | RTLD_GLOBAL);
    if (handle) sym = dlsym(handle, name);
  }
  return sym;
}

}  // namespace

SgemmFn blas_sgemm() {
  static const SgemmFn fn = reinterpret_cast<SgemmFn>(find_blas_symbol("sgemm_"));
  return fn;
}

DgemmFn blas_dgemm() {
  static const DgemmFn fn = reinterpret_cast<DgemmFn>(find_blas_symbol("dgemm_"));
  return fn;
}

}  // namespace swarmt
