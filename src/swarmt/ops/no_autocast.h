// Kernels with their own precision policy run outside autocast.
//
// Under bf16 autocast every matmul inside a kernel would come back in bf16, while the chunkwise kernels
// accumulate states and gate cumsums in fp32 buffers they write in place (which then fails: "input
// tensor dtype BFloat16 and output tensor dtype float should match") and would lose the precision the
// stabilised recurrences need. Like PyTorch's custom_fwd for custom autograd functions, the kernels'
// forward and backward exclude the autocast dispatch keys and compute in the dtype of their inputs
// (fp32 accumulation for bf16 inputs, as each kernel documents).
#pragma once

#include <c10/core/DispatchKeySet.h>
#include <c10/core/impl/LocalDispatchKeySet.h>

namespace swarmt::ops {

class NoAutocast {
 public:
  NoAutocast() : guard_(c10::autocast_dispatch_keyset) {}

 private:
  c10::impl::ExcludeDispatchKeyGuard guard_;
};

}  // namespace swarmt::ops
