// causal_attention: the blocked kernel wrapped as an autograd function, and the plain reference.
#include "swarmt/ops/attention.h"

#include <torch/csrc/autograd/custom_function.h>

#include <limits>

#include "swarmt/core/error.h"
#include "swarmt/ops/attention_blocked.h"
#include "swarmt/ops/no_autocast.h"

namespace swarmt::ops {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// Saves q, k, v, the output and the per-row log-sum-exp only (O(N·D) memory); the backward recomputes the
// probabilities block by block.
struct BlockedAttentionFunction : public torch::autograd::Function<BlockedAttentionFunction> {
  // doc_ids travels as an optional: an undefined tensor cannot be an input of an autograd node.
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                            const c10::optional<at::Tensor>& doc_ids, const AttentionOptions& options) {
    NoAutocast no_autocast;
    const at::Tensor documents = doc_ids.has_value() ? *doc_ids : at::Tensor();
    auto result = detail::blocked_attention_forward(q, k, v, documents, options);
    if (documents.defined())
      ctx->save_for_backward({q, k, v, result.out, result.lse, documents});
    else
      ctx->save_for_backward({q, k, v, result.out, result.lse});
    ctx->saved_data["window"] = options.window;
    ctx->saved_data["scale"] = options.scale;
    ctx->saved_data["softcap"] = options.softcap;
    ctx->saved_data["block_size"] = options.block_size;
    return result.out;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    NoAutocast no_autocast;
    const auto saved = ctx->get_saved_variables();
    const auto& grad_out = grad_outputs[0];
    if (!grad_out.defined()) return {at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor()};
    AttentionOptions options;
    options.window = ctx->saved_data["window"].toInt();
    options.scale = ctx->saved_data["scale"].toDouble();
    options.softcap = ctx->saved_data["softcap"].toDouble();
    options.block_size = ctx->saved_data["block_size"].toInt();
    const at::Tensor documents = saved.size() > 5 ? saved[5] : at::Tensor();
    auto grads = detail::blocked_attention_backward(saved[0], saved[1], saved[2], documents, saved[3], saved[4],
                                                    grad_out.contiguous(), options);
    // One entry per forward argument: doc_ids and the options get none.
    return {grads.dq, grads.dk, grads.dv, at::Tensor(), at::Tensor()};
  }
};

}  // namespace

at::Tensor causal_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                            const AttentionOptions& options, const at::Tensor& doc_ids) {
  detail::check_attention_inputs(q, k, v, options, doc_ids);
  c10::optional<at::Tensor> documents;
  if (doc_ids.defined()) documents = doc_ids;
  return BlockedAttentionFunction::apply(q, k, v, documents, options);
}

at::Tensor causal_attention_reference(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                      const AttentionOptions& options, const at::Tensor& doc_ids) {
  detail::check_attention_inputs(q, k, v, options, doc_ids);
  const int64_t rep = q.size(1) / k.size(1), n_queries = q.size(2), n_keys = k.size(2);
  const auto compute = detail::attention_compute_type(q.scalar_type());
  const double scale = detail::attention_scale(options, q.size(3));
  auto keys = k.to(compute).repeat_interleave(rep, 1);  // (B, Hq, Nk, D): query head h uses kv head h / rep
  auto values = v.to(compute).repeat_interleave(rep, 1);
  auto scores = at::matmul(q.to(compute), keys.transpose(-1, -2)) * scale;  // (B, Hq, Nq, Nk)
  if (options.softcap > 0.0) scores = at::tanh(scores / options.softcap) * options.softcap;
  // pos_i − pos_j with query i at key index i + (Nk − Nq)
  auto index_options = at::TensorOptions().dtype(at::kLong).device(q.device());
  auto distance = at::arange(n_queries, index_options).unsqueeze(1) + (n_keys - n_queries) -
                  at::arange(n_keys, index_options).unsqueeze(0);  // (Nq, Nk)
  auto visible = distance.ge(0);
  if (options.window > 0) visible = visible.logical_and(distance.lt(options.window));
  visible = visible.view({1, 1, n_queries, n_keys});
  if (doc_ids.defined()) {
    auto docs = doc_ids.to(q.device(), at::kLong);
    auto same_doc = docs.narrow(1, n_keys - n_queries, n_queries).unsqueeze(2).eq(docs.unsqueeze(1));  // (B, Nq, Nk)
    visible = visible.logical_and(same_doc.unsqueeze(1));
  }
  scores = scores.masked_fill(visible.logical_not(), -std::numeric_limits<double>::infinity());
  return at::matmul(at::softmax(scores, -1), values).to(q.scalar_type());
}

}  // namespace swarmt::ops
