#include "swarmt/nn/layer_context.h"

namespace swarmt::nn {

at::Tensor resets_from_doc_ids(const at::Tensor& doc_ids) {
  if (!doc_ids.defined()) return {};
  auto resets = at::zeros(doc_ids.sizes(), doc_ids.options().dtype(at::kBool));
  int64_t n = doc_ids.size(1);
  if (n > 1) {
    using namespace at::indexing;
    resets.index_put_({Slice(), Slice(1, None)},
                      doc_ids.index({Slice(), Slice(1, None)}) != doc_ids.index({Slice(), Slice(None, n - 1)}));
  }
  return resets;
}

}  // namespace swarmt::nn
