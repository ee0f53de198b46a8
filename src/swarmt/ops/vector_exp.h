// The softmax pieces of a row in fp32, at the raw-buffer kernel level in use (ops/matvec.h's
// set_matvec_isa): AVX-512 (16 lanes), AVX2 + FMA (8 lanes) or plain loops.
#pragma once

#include <cstdint>

namespace swarmt::ops {

// x[i] = e^x[i] in fp32 (within ~2 ulp of std::exp; e^−inf = 0).
void exp_inplace(float* x, int64_t n);
// x[i] = e^(x[i] − shift), returning Σ x[i]; and max_i x[i] (−inf for n = 0): the softmax of a row.
float exp_shifted_sum(float* x, int64_t n, float shift);
float max_of(const float* x, int64_t n);

}  // namespace swarmt::ops
