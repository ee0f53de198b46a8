#include "swarmt/models/armt_model.h"

#include <ATen/CPUGeneratorImpl.h>

#include <cmath>

#include "swarmt/core/error.h"
#include "swarmt/models/armt_segment_checkpoint.h"
#include "swarmt/nn/linear.h"
#include "swarmt/nn/state_dtype.h"

namespace swarmt::models {

// ---------------------------------------------------------------------------------------------------
// One memory layer

namespace {

// PyTorch's default nn.Linear initialisation, U(-1/sqrt(fan_in), 1/sqrt(fan_in)), from our own generator
// so that creating an adapter never disturbs the global random stream.
void linear_default_init_(torch::nn::Linear& linear, at::Generator& generator) {
  at::NoGradGuard no_grad;
  const double bound = 1.0 / std::sqrt(static_cast<double>(linear->weight.size(1)));
  linear->weight.uniform_(-bound, bound, generator);
  if (linear->bias.defined()) linear->bias.uniform_(-bound, bound, generator);
}

}  // namespace

ArmtMemoryLayerImpl::ArmtMemoryLayerImpl(int64_t hidden_size, const ArmtConfig& c, at::Generator& generator)
    : hidden_size_(hidden_size),
      heads_(c.num_heads),
      nu_(c.dpfp_nu),
      key_dim_per_head_(c.key_dim() / c.num_heads),
      linear_features_(c.linear_features()),
      normalize_(c.normalize_features),
      gamma_correction_(c.gamma_correction),
      use_denom_(c.use_denom),
      eps_(c.eps) {
  query = register_module("query", nn::linear_layer(hidden_size, c.d_mem, false));
  key = register_module("key", nn::linear_layer(hidden_size, c.d_mem, false));
  value = register_module("value", nn::linear_layer(hidden_size, hidden_size, false));
  beta = register_module("beta", nn::linear_layer(hidden_size, c.num_heads, true));
  linear_default_init_(query, generator);
  linear_default_init_(key, generator);
  linear_default_init_(beta, generator);
  if (c.read_gate) {  // drawn after the others, so configs without the gate initialise as before
    gate = register_module("gate", nn::linear_layer(hidden_size, c.num_heads, true));
    linear_default_init_(gate, generator);  // g ≈ 1/2 at the start
  }
  at::NoGradGuard no_grad;
  value->weight.zero_();  // A stays 0: the wrapped model starts as the base model (§1.3)
}

at::Tensor ArmtMemoryLayerImpl::features(const at::Tensor& projected, at::ScalarType dtype) const {
  const int64_t batch = projected.size(0), n = projected.size(1);
  at::Tensor x = projected.to(dtype).view({batch, n, heads_, -1}).permute({0, 2, 1, 3});  // (B, H, N, d_mem/H)
  at::Tensor phi = linear_features_ ? x : ops::dpfp(x, nu_);
  // ||φ|| = 0 when x = 0; the clamp keeps the division finite (φ stays 0 then).
  if (normalize_) phi = phi / phi.norm(2, -1, /*keepdim=*/true).clamp_min(1e-12);
  return phi;
}

ops::AssocMemoryState ArmtMemoryLayerImpl::zero_state(int64_t batch, at::ScalarType dtype, at::Device device) const {
  return ops::assoc_memory_zero_state(batch, heads_, key_dim_per_head_, hidden_size_ / heads_, dtype, device);
}

at::Tensor ArmtMemoryLayerImpl::read(const ops::AssocMemoryState& state, const at::Tensor& h) {
  if (state.empty) return at::zeros_like(h);
  const int64_t batch = h.size(0), n = h.size(1);
  at::Tensor q = features(nn::linear(query, h), state.A.scalar_type());
  at::Tensor y = ops::assoc_read(state, q, eps_, use_denom_);                     // (B, H, N, d/H)
  if (gate) {  // y_t,h ← σ(w_h·h_t + b_h) · y_t,h
    y = y * at::sigmoid(nn::linear(gate, h).to(y.scalar_type())).permute({0, 2, 1}).unsqueeze(-1);
  }
  return y.permute({0, 2, 1, 3}).reshape({batch, n, hidden_size_}).to(h.scalar_type());
}

ops::AssocMemoryState ArmtMemoryLayerImpl::write(const ops::AssocMemoryState& state, const at::Tensor& m) {
  const int64_t batch = m.size(0), tokens = m.size(1);
  const at::ScalarType dtype = state.A.scalar_type();
  at::Tensor k = features(nn::linear(key, m), dtype);
  at::Tensor v = nn::linear(value, m).to(dtype).view({batch, tokens, heads_, -1}).permute({0, 2, 1, 3});
  at::Tensor b = at::sigmoid(nn::linear(beta, m).to(dtype)).permute({0, 2, 1}).unsqueeze(-1);  // (B, H, M, 1)
  return ops::assoc_write(state, k, v, b, eps_, gamma_correction_, use_denom_);
}

// ---------------------------------------------------------------------------------------------------
// Stream state

int64_t ArmtStreamState::bytes() const {
  int64_t total = segment.bytes() + write_segment.bytes();
  for (const auto& m : memories) total += m.bytes();
  return total;
}

int64_t ArmtStreamState::bytes_after(int64_t more_tokens) const {
  // The active segment grows until it holds a full segment (memory tokens included at the commit);
  // every later segment starts from an empty state and peaks at the same size.
  const int64_t grows = std::min(more_tokens, segment_tokens - active);
  int64_t total = segment.bytes_after(grows) + write_segment.bytes_after(grows);
  for (const auto& m : memories) total += m.bytes();
  return total;
}

void ArmtStreamState::fields(nn::StateFields& f) {
  for (size_t i = 0; i < memories.size(); ++i) {
    f.scoped(str_cat("memory.", i), [this, i](nn::StateFields& m) {
      m.tensor("A", memories[i].A);
      m.tensor("z", memories[i].z);
      int64_t empty = memories[i].empty ? 1 : 0;
      m.integer("empty", empty);
      if (m.loading()) {
        SWARMT_CHECK_INPUT(empty == 0 || empty == 1, m.where(), ": memory ", i, " has 'empty' = ", empty);
        memories[i].empty = empty == 1;
      }
    });
  }
  f.scoped("segment", [this](nn::StateFields& s) { segment.fields(s); });
  if (!write_segment.layers.empty()) {
    f.scoped("write_segment", [this](nn::StateFields& s) { write_segment.fields(s); });
  }
  f.integer("active", active);
  if (f.loading()) {
    SWARMT_CHECK_INPUT(active >= 0 && active <= segment_tokens, f.where(), ": the active segment holds ", active,
                       " tokens (a segment holds at most ", segment_tokens, ")");
  }
}

// ---------------------------------------------------------------------------------------------------
// The wrapper

ArmtModel::ArmtModel(std::shared_ptr<CausalLM> base, ArmtConfig config) : base_(std::move(base)), config_(std::move(config)) {
  SWARMT_CHECK(base_ != nullptr, "ARMT needs a base model");
  SWARMT_CHECK_INPUT(base_->model_type() != "armt", "ARMT cannot wrap another ARMT model");
  const int64_t d = base_->hidden_size();
  SWARMT_CHECK_INPUT(d % config_.num_heads == 0, "ARMT: the base model's hidden_size (", d,
                     ") must be divisible by num_heads (", config_.num_heads, ")");
  memory_layers_ = config_.resolve_memory_layers(base_->num_layers(), "ARMT config: field 'memory_layers'");
  slot_of_layer_.assign(base_->num_layers(), -1);
  for (size_t s = 0; s < memory_layers_.size(); ++s) slot_of_layer_[memory_layers_[s]] = static_cast<int64_t>(s);

  register_module("base", base_);
  adapter_ = register_module("armt", std::make_shared<torch::nn::Module>());
  auto layers = adapter_->register_module("layers", std::make_shared<torch::nn::Module>());
  at::Generator generator = at::make_generator<at::CPUGeneratorImpl>(config_.seed);

  // Memory tokens: N(0, σ²) with σ the spread of the base model's token embeddings as the layers see
  // them (after any embedding scale), unless the config sets σ (specs/armt.md §1.3).
  double std = config_.memory_init_std;
  if (std <= 0) {
    at::NoGradGuard no_grad;
    const int64_t n = std::min<int64_t>(base_->vocab_size(), 4096);
    std = base_->embed(at::arange(n, at::TensorOptions().dtype(at::kLong).device(base_->device())).unsqueeze(0))
              .to(at::kDouble)
              .std()
              .item<double>();
    if (!std::isfinite(std) || std <= 0) std = 0.02;
  }
  at::Tensor tokens = at::empty({config_.num_memory_tokens, d}, at::kFloat);
  tokens.normal_(0.0, std, generator);
  memory_tokens_ = adapter_->register_parameter("memory_tokens", tokens.to(base_->dtype()).to(base_->device()));

  for (int64_t l : memory_layers_) {
    auto module = ArmtMemoryLayer(d, config_, generator);
    module->to(base_->dtype());
    module->to(base_->device());
    memory_modules_.push_back(layers->register_module(std::to_string(l), module));
  }
}

Json ArmtModel::config_json() const {
  Json j = config_.to_json();
  j["model_type"] = "armt";
  j["base_config"] = base_->config_json();
  return j;
}

at::ScalarType ArmtModel::memory_dtype() const { return nn::recurrent_state_dtype(base_->dtype()); }

std::vector<std::pair<std::string, at::Tensor>> ArmtModel::adapter_tensors() const {
  std::vector<std::pair<std::string, at::Tensor>> out;
  for (const auto& item : adapter_->named_parameters()) out.emplace_back("armt." + item.key(), item.value());
  return out;
}

std::vector<std::pair<std::string, at::Tensor>> ArmtModel::checkpoint_tensors() const {
  auto out = base_->checkpoint_tensors();
  for (auto& item : adapter_tensors()) out.push_back(std::move(item));
  return out;
}

void ArmtModel::load_adapter_tensors(const std::function<at::Tensor(const std::string&)>& lookup,
                                     const std::string& source) {
  at::NoGradGuard no_grad;
  for (auto& [name, param] : adapter_tensors()) {
    at::Tensor stored = lookup(name);
    SWARMT_CHECK_INPUT(stored.defined(), source, ": tensor '", name, "' is missing");
    SWARMT_CHECK_INPUT(stored.sizes() == param.sizes(), source, ": tensor '", name, "' has shape ", stored.sizes(),
                       ", expected ", param.sizes());
    param.copy_(stored);
  }
}

void ArmtModel::load_checkpoint_tensors(const std::function<at::Tensor(const std::string&)>& lookup,
                                        const std::string& source) {
  base_->load_checkpoint_tensors(lookup, source);
  load_adapter_tensors(lookup, source);
}

std::vector<ops::AssocMemoryState> ArmtModel::zero_memories(int64_t batch) const {
  std::vector<ops::AssocMemoryState> out;
  for (const auto& m : memory_modules_) out.push_back(m->zero_state(batch, memory_dtype(), base_->device()));
  return out;
}

at::Tensor ArmtModel::layer_with_memory(int64_t i, const at::Tensor& h, const LayerRun& run_layer,
                                        const std::vector<ops::AssocMemoryState>& read_from,
                                        std::vector<ops::AssocMemoryState>* write_to, int64_t write_from) {
  const int64_t slot = slot_of_layer_[i];
  if (slot < 0) return run_layer(base_->layer(i), h);
  ArmtMemoryLayer& memory = memory_modules_[slot];
  at::Tensor input = h;
  if (write_to != nullptr && config_.separate_write_pass) {
    // The write pass of a separate write: nothing reads.
  } else if (write_to != nullptr && !config_.memory_tokens_read) {
    // Only the real tokens [0, write_from) read; the memory tokens themselves do not.
    at::Tensor silent = at::zeros_like(h.narrow(1, write_from, h.size(1) - write_from));
    input = h + (write_from == 0 ? silent
                                 : at::cat({memory->read(read_from[slot], h.narrow(1, 0, write_from)), silent}, 1));
  } else {
    input = h + memory->read(read_from[slot], h);
  }
  at::Tensor out = run_layer(base_->layer(i), input);
  if (write_to != nullptr) {
    (*write_to)[slot] = memory->write(read_from[slot], out.narrow(1, write_from, out.size(1) - write_from));
  }
  return out;
}

at::Tensor ArmtModel::run_segment(const at::Tensor& x, std::vector<ops::AssocMemoryState>& memories, bool write,
                                  const ForwardOptions& options, const at::Tensor& doc_ids) {
  if (!write || !config_.separate_write_pass) return segment_pass(x, memories, write, options, doc_ids);
  // A separate write: the real tokens alone read the memory (their outputs are the segment's); then the
  // segment runs again with the memory tokens, nothing reading, and each memory layer writes.
  at::Tensor out = segment_pass(x, memories, /*write=*/false, options, doc_ids);
  segment_pass(x, memories, /*write=*/true, options, doc_ids);
  return out;
}

at::Tensor ArmtModel::segment_pass(const at::Tensor& x, std::vector<ops::AssocMemoryState>& memories, bool write,
                                   const ForwardOptions& options, const at::Tensor& doc_ids) {
  const int64_t batch = x.size(0), n = x.size(1), mem = config_.num_memory_tokens;
  at::Tensor h = x;
  at::Tensor docs = doc_ids;
  if (write) {
    h = at::cat({x, memory_tokens_.to(x.scalar_type()).unsqueeze(0).expand({batch, mem, x.size(2)})}, 1);
    // Memory tokens belong to the document of the segment's last token.
    if (docs.defined()) docs = at::cat({docs, docs.narrow(1, n - 1, 1).expand({batch, mem})}, 1);
  }
  nn::LayerContext ctx;
  ctx.positions = make_positions(h.size(1), 0);  // segment-local positions (§2.3)
  ctx.window = options.window;
  if (docs.defined()) {
    ctx.doc_ids = docs;
    ctx.resets = nn::resets_from_doc_ids(docs);
  }
  const auto forward = [&ctx](nn::DecoderLayer& layer, const at::Tensor& in) { return layer.forward(in, ctx); };
  for (int64_t i = 0; i < base_->num_layers(); ++i)
    h = layer_with_memory(i, h, forward, memories, write ? &memories : nullptr, n);
  return write ? h.narrow(1, 0, n) : h;
}

ArmtModel::SegmentsResult ArmtModel::forward_segments(const at::Tensor& tokens, const ForwardOptions& options,
                                                      bool write_last) {
  SWARMT_CHECK(tokens.dim() == 2, "tokens must be (batch, length)");
  const int64_t batch = tokens.size(0), length = tokens.size(1), seg = config_.segment_size;
  const at::Tensor all_docs = options.doc_ids.defined() ? options.doc_ids.to(device()) : at::Tensor();
  const at::Tensor on_device = tokens.to(device());
  SegmentsResult result;
  result.memories = zero_memories(batch);
  std::vector<at::Tensor> outputs;
  const int64_t segments = (length + seg - 1) / seg;
  const bool checkpoint = config_.checkpoint_segments && at::GradMode::is_enabled();
  for (int64_t s = 0; s < segments; ++s) {
    const int64_t begin = s * seg, n = std::min(seg, length - begin);
    const bool write = s + 1 < segments || write_last;
    at::Tensor x = embed(on_device.narrow(1, begin, n));
    at::Tensor docs = all_docs.defined() ? all_docs.narrow(1, begin, n) : at::Tensor();
    if (checkpoint) {
      outputs.push_back(checkpointed_segment(*this, x, result.memories, write, options, docs));
    } else {
      outputs.push_back(run_segment(x, result.memories, write, options, docs));
    }
    // Truncated backpropagation: gradients reach back at most bptt_depth segments of memory.
    if (config_.bptt_depth > 0 && (s + 1) % config_.bptt_depth == 0) {
      for (auto& m : result.memories) {
        m.A = m.A.detach();
        m.z = m.z.detach();
      }
    }
  }
  result.hidden = outputs.size() == 1 ? outputs[0] : at::cat(outputs, 1);
  return result;
}

at::Tensor ArmtModel::forward_hidden(const at::Tensor& tokens, const ForwardOptions& options) {
  SWARMT_CHECK_INPUT(options.position_offset == 0,
                     "ARMT models take whole inputs (positions are local to each segment); use the streaming "
                     "interface to continue a sequence");
  return forward_segments(tokens, options).hidden;
}

ModelState ArmtModel::new_state(int64_t batch) {
  auto stream = std::make_unique<ArmtStreamState>();
  stream->memories = zero_memories(batch);
  stream->segment = base_->new_state(batch);
  if (config_.separate_write_pass) stream->write_segment = base_->new_state(batch);
  stream->batch = batch;
  stream->segment_tokens = config_.segment_size + config_.num_memory_tokens;
  ModelState state;
  state.layers.push_back(std::move(stream));
  return state;
}

void ArmtModel::commit(ArmtStreamState& s) {
  const int64_t mem = config_.num_memory_tokens;
  at::Tensor h = memory_tokens_.unsqueeze(0).expand({s.batch, mem, hidden_size()});
  // The memory tokens continue the active segment (they attend to all its tokens), reading the memories
  // of earlier segments; each memory layer then writes from its outputs at these positions. A separate
  // write continues the write pass's segment instead, reading nothing.
  ModelState& pass = config_.separate_write_pass ? s.write_segment : s.segment;
  std::vector<ops::AssocMemoryState> next = s.memories;
  for (int64_t i = 0; i < base_->num_layers(); ++i) {
    const auto forward = [&pass, i](nn::DecoderLayer& layer, const at::Tensor& in) {
      return layer.forward_stateful(in, *pass.layers[i]);
    };
    h = layer_with_memory(i, h, forward, s.memories, &next, 0);
  }
  s.memories = std::move(next);
  s.segment = base_->new_state(s.batch);
  if (config_.separate_write_pass) s.write_segment = base_->new_state(s.batch);
  s.active = 0;
}

at::Tensor ArmtModel::forward_stateful_hidden(const at::Tensor& tokens, ModelState& state) {
  SWARMT_CHECK(state.layers.size() == 1, "state does not match the ARMT model");
  auto* s = dynamic_cast<ArmtStreamState*>(state.layers[0].get());
  SWARMT_CHECK(s != nullptr, "state does not match the ARMT model");
  const at::Tensor on_device = tokens.to(device());
  const int64_t length = tokens.size(1), seg = config_.segment_size;
  std::vector<at::Tensor> outputs;
  for (int64_t offset = 0; offset < length;) {
    if (s->active == seg) commit(*s);
    const int64_t n = std::min(seg - s->active, length - offset);
    const at::Tensor x = embed(on_device.narrow(1, offset, n));
    at::Tensor h = x;
    for (int64_t i = 0; i < base_->num_layers(); ++i) {
      const auto forward = [s, i](nn::DecoderLayer& layer, const at::Tensor& in) {
        return layer.forward_stateful(in, *s->segment.layers[i]);
      };
      h = layer_with_memory(i, h, forward, s->memories, nullptr, 0);
    }
    if (config_.separate_write_pass) {  // the write pass sees the same tokens and reads nothing
      at::Tensor w = x;
      for (int64_t i = 0; i < base_->num_layers(); ++i) {
        w = base_->layer(i).forward_stateful(w, *s->write_segment.layers[i]);
      }
    }
    outputs.push_back(h);
    s->active += n;
    offset += n;
  }
  state.position += length;
  return outputs.size() == 1 ? outputs[0] : at::cat(outputs, 1);
}

}  // namespace swarmt::models
