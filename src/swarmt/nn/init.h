// Weight initialisations used by the xLSTM-7B / SWAX recipe (specs/swax.md §2.5) and Gated DeltaNet
// (§3.4).
#pragma once

#include <ATen/ATen.h>

namespace swarmt::nn {

// "small_init": N(0, σ²) with σ = sqrt(2 / (5 d)).
void small_init_(at::Tensor weight, int64_t dim);

// "wang_init" for output projections: N(0, σ²) with σ = 2 / (num_blocks · sqrt(dim)).
void wang_init_(at::Tensor weight, int64_t dim, int64_t num_blocks);

// N(0, std²).
void normal_init_(at::Tensor weight, double std);

// Building a model only to load a checkpoint into it: every parameter is then overwritten, and drawing a
// random initialisation for hundreds of millions of parameters costs seconds (most of a 360M model's
// load time). While a SkipRandomInit lives on this thread, the initialisers above and the models'
// constructors leave parameters as allocated; loading then requires every parameter from the file.
class SkipRandomInit {
 public:
  SkipRandomInit();
  ~SkipRandomInit();
  SkipRandomInit(const SkipRandomInit&) = delete;
  SkipRandomInit& operator=(const SkipRandomInit&) = delete;

 private:
  bool previous_;
};

bool random_init_skipped();

}  // namespace swarmt::nn
