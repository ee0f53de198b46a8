#include "swarmt/nn/layer_context.h"

namespace swarmt::nn {
namespace {

// Forwards every field under "<prefix>.<name>".
class PrefixedStateFields : public StateFields {
 public:
  PrefixedStateFields(StateFields& inner, std::string prefix) : inner_(inner), prefix_(std::move(prefix)) {}
  void tensor(const std::string& name, at::Tensor& value, int64_t growable_dim) override {
    inner_.tensor(prefix_ + name, value, growable_dim);
  }
  void integer(const std::string& name, int64_t& value) override { inner_.integer(prefix_ + name, value); }
  bool loading() const override { return inner_.loading(); }
  std::string where() const override { return inner_.where(); }

 private:
  StateFields& inner_;
  std::string prefix_;
};

}  // namespace

void StateFields::scoped(const std::string& prefix, const std::function<void(StateFields&)>& visit) {
  PrefixedStateFields prefixed(*this, prefix + ".");
  visit(prefixed);
}

void StateFields::scoped(const std::string& prefix, LayerState& nested) {
  scoped(prefix, [&nested](StateFields& f) { nested.fields(f); });
}

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
