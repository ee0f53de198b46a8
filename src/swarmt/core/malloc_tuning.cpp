#include "swarmt/core/malloc_tuning.h"

#include <malloc.h>

#include <cstdlib>
#include <cstring>

namespace swarmt {

void tune_malloc_for_tensors() {
  const char* opt_out = std::getenv("SWARMT_SYSTEM_MALLOC");
  if (opt_out && std::strcmp(opt_out, "1") == 0) return;
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, -1);
}

}  // namespace swarmt
