#include "swarmt/models/causal_lm.h"

#include <optional>

#include "swarmt/core/error.h"

namespace swarmt::models {

int64_t ModelState::bytes() const {
  int64_t total = 0;
  for (const auto& l : layers) total += l ? l->bytes() : 0;
  return total;
}

int64_t ModelState::bytes_after(int64_t more_tokens) const {
  int64_t total = 0;
  for (const auto& l : layers) total += l ? l->bytes_after(more_tokens) : 0;
  return total;
}

void ModelState::fields(nn::StateFields& f) {
  f.integer("position", position);
  if (f.loading()) SWARMT_CHECK_INPUT(position >= 0, f.where(), ": negative position ", position);
  for (size_t i = 0; i < layers.size(); ++i) {
    SWARMT_CHECK(layers[i] != nullptr, "a model state without layer ", i);
    f.scoped(str_cat("layers.", i), *layers[i]);
  }
}

at::Tensor make_positions(int64_t n, int64_t offset) {
  return at::arange(offset, offset + n, at::TensorOptions().dtype(at::kLong));
}

at::Tensor CausalLM::forward_hidden(const at::Tensor& tokens, const ForwardOptions& options) {
  SWARMT_CHECK(tokens.dim() == 2, "tokens must be (batch, length)");
  nn::LayerContext ctx;
  ctx.positions = make_positions(tokens.size(1), options.position_offset);
  ctx.window = options.window;
  if (options.doc_ids.defined()) {
    ctx.doc_ids = options.doc_ids.to(device());
    ctx.resets = nn::resets_from_doc_ids(ctx.doc_ids);
  }
  auto h = embed(tokens.to(device()));
  for (int64_t i = 0; i < num_layers(); ++i) h = layer(i).forward(h, ctx);
  return h;
}

at::Tensor CausalLM::forward(const at::Tensor& tokens, const ForwardOptions& options) {
  return head(forward_hidden(tokens, options));
}

ModelState CausalLM::new_state(int64_t batch) {
  ModelState state;
  for (int64_t i = 0; i < num_layers(); ++i) state.layers.push_back(layer(i).new_state(batch, dtype(), device()));
  return state;
}

at::Tensor CausalLM::forward_stateful_hidden(const at::Tensor& tokens, ModelState& state) {
  SWARMT_CHECK(static_cast<int64_t>(state.layers.size()) == num_layers(), "state does not match the model");
  auto h = embed(tokens.to(device()));
  for (int64_t i = 0; i < num_layers(); ++i) h = layer(i).forward_stateful(h, *state.layers[i]);
  state.position += tokens.size(1);
  return h;
}

at::Tensor CausalLM::forward_stateful(const at::Tensor& tokens, ModelState& state) {
  return head(forward_stateful_hidden(tokens, state));
}

int64_t CausalLM::inference_window() {
  int64_t w = 0;
  for (int64_t i = 0; i < num_layers(); ++i) w = std::max(w, layer(i).window());
  return w;
}

void CausalLM::set_inference_window(int64_t window) {
  for (int64_t i = 0; i < num_layers(); ++i)
    if (layer(i).window() > 0) layer(i).set_window(window);
}

at::ScalarType CausalLM::dtype() const {
  for (const auto& p : parameters()) return p.scalar_type();
  return at::kFloat;
}

namespace {

// The device of the first parameter found depth-first. parameters() would list every tensor of the
// model; this is asked once per forward pass, so it stops at the first one.
std::optional<at::Device> first_parameter_device(const torch::nn::Module& module) {
  for (const auto& p : module.parameters(/*recurse=*/false)) return p.device();
  for (const auto& child : module.children())
    if (auto device = first_parameter_device(*child)) return device;
  return std::nullopt;
}

}  // namespace

at::Device CausalLM::device() const { return first_parameter_device(*this).value_or(at::Device(at::kCPU)); }

int64_t CausalLM::num_parameters() const {
  int64_t n = 0;
  for (const auto& p : parameters()) n += p.numel();
  return n;
}

std::vector<std::pair<std::string, at::Tensor>> CausalLM::checkpoint_tensors() const {
  std::vector<std::pair<std::string, at::Tensor>> out;
  for (const auto& item : named_parameters()) out.emplace_back(item.key(), to_checkpoint(item.key(), item.value()));
  return out;
}

at::Tensor CausalLM::to_checkpoint(const std::string& /*name*/, const at::Tensor& parameter) const { return parameter; }

void CausalLM::load_tensor(const std::string& /*name*/, const at::Tensor& stored, at::Tensor& parameter) {
  parameter.copy_(stored);
}

void CausalLM::load_checkpoint_tensors(const std::function<at::Tensor(const std::string&)>& lookup,
                                       const std::string& source) {
  at::NoGradGuard no_grad;
  for (auto& item : named_parameters()) {
    at::Tensor stored = lookup(item.key());
    SWARMT_CHECK_INPUT(stored.defined(), source, ": tensor '", item.key(), "' is missing");
    SWARMT_CHECK_INPUT(stored.sizes() == item.value().sizes(), source, ": tensor '", item.key(), "' has shape ",
                       stored.sizes(), ", expected ", item.value().sizes());
    load_tensor(item.key(), stored, item.value());
  }
}

}  // namespace swarmt::models
