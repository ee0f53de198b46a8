// Blocked causal / sliding-window attention: forward and backward kernels (see attention_blocked.h).
//
// Per query block, with s = softcap(scale · q kᵀ) + bias (bias 0 where the key is visible, −inf else):
//   forward    m = max_j s_ij,  l = Σ_j exp(s_ij − m),  o = (Σ_j exp(s_ij − m) v_j) / l,  lse = m + log l
//   backward   P = exp(s − lse),  dS = P ⊙ (dO Vᵀ − rowsum(dO ⊙ O)),  dQ = scale·dS K,
//              dK += scale·dSᵀ Q,  dV += Pᵀ dO
// A block sees its whole key band at once, so the softmax needs no online rescaling across key tiles: the
// band is at most block + window − 1 keys long (window 0: all earlier keys, one row of scores per query,
// still never N×N).
#include "swarmt/ops/attention_blocked.h"

#include <cmath>
#include <limits>
#include <tuple>
#include <vector>

#include "swarmt/core/error.h"

namespace swarmt::ops::detail {
namespace {

// (B, Hq, N, rest...) -> (B·Hkv, N·rep, rest...): row n·rep + r is query head kv_head·rep + r at position n.
at::Tensor group_query_heads(const at::Tensor& x, int64_t kv_heads) {
  const int64_t batch = x.size(0), rep = x.size(1) / kv_heads, length = x.size(2);
  std::vector<int64_t> split = {batch, kv_heads, rep, length};
  std::vector<int64_t> grouped = {batch * kv_heads, length * rep};
  for (int64_t d = 3; d < x.dim(); ++d) {
    split.push_back(x.size(d));
    grouped.push_back(x.size(d));
  }
  return x.reshape(split).transpose(2, 3).reshape(grouped).contiguous();
}

// Inverse of group_query_heads: (B·Hkv, N·rep, D) -> (B, Hkv·rep, N, D).
at::Tensor ungroup_query_heads(const at::Tensor& x, int64_t batch, int64_t kv_heads, int64_t rep) {
  const int64_t length = x.size(1) / rep, head_dim = x.size(2);
  return x.view({batch, kv_heads, length, rep, head_dim})
      .transpose(2, 3)
      .reshape({batch, kv_heads * rep, length, head_dim})
      .contiguous();  // reshape may return a strided view when Hkv == 1
}

// (B, Hkv, N, D) -> (B·Hkv, N, D). A view when possible (e.g. the first N slots of a KV cache): the batched
// matmuls take any batch stride as long as rows are unit-stride.
at::Tensor flatten_kv_heads(const at::Tensor& x) {
  auto flat = x.reshape({x.size(0) * x.size(1), x.size(2), x.size(3)});
  return flat.stride(2) == 1 ? flat : flat.contiguous();
}

// Geometry of the blocked kernel and the pieces every block needs: its key band, its mask, its logits.
class BandedBlocks {
 public:
  struct Block {
    int64_t q_start;  // first query (query index) of the block
    int64_t q_len;    // queries in the block
    int64_t k_start;  // first key (key index) of the band
    int64_t k_len;    // keys in the band
  };

  BandedBlocks(const at::Tensor& q, const at::Tensor& k, const at::Tensor& doc_ids, const AttentionOptions& options)
      : batch_(q.size(0)),
        kv_heads_(k.size(1)),
        rep_(q.size(1) / k.size(1)),
        n_queries_(q.size(2)),
        past_(k.size(2) - q.size(2)),
        window_(options.window),
        block_size_(options.block_size),
        scale_(attention_scale(options, q.size(3))),
        softcap_(options.softcap),
        compute_(attention_compute_type(q.scalar_type())),
        device_(q.device()) {
    if (doc_ids.defined()) doc_ids_ = doc_ids.to(device_, at::kLong);
  }

  int64_t num_blocks() const { return (n_queries_ + block_size_ - 1) / block_size_; }
  int64_t rep() const { return rep_; }
  at::ScalarType compute_type() const { return compute_; }

  Block block(int64_t index) const {
    Block b;
    b.q_start = index * block_size_;
    b.q_len = std::min(block_size_, n_queries_ - b.q_start);
    const int64_t first_pos = b.q_start + past_;  // key index of the block's first query
    const int64_t k_end = first_pos + b.q_len;    // one past the last query's own key
    b.k_start = window_ > 0 ? std::max<int64_t>(0, first_pos - window_ + 1) : 0;
    b.k_len = k_end - b.k_start;
    return b;
  }

  // Additive mask (Bd, 1, q_len, 1, k_len), Bd = B with doc_ids else 1: 0 where query i may see key j
  // (0 <= pos_i − pos_j < window, same document), −inf elsewhere. Blocks with the same geometry share it.
  at::Tensor bias(const Block& b) {
    const int64_t shift = b.q_start + past_ - b.k_start;  // pos_i − pos_j for the block's first query and key
    const bool reusable = !doc_ids_.defined();
    if (reusable && cached_bias_.defined() && cached_key_ == std::make_tuple(b.q_len, b.k_len, shift))
      return cached_bias_;
    auto index_options = at::TensorOptions().dtype(at::kLong).device(device_);
    auto distance = at::arange(b.q_len, index_options).unsqueeze(1) - at::arange(b.k_len, index_options).unsqueeze(0) +
                    shift;  // (q_len, k_len): pos_i − pos_j
    auto visible = distance.ge(0);
    if (window_ > 0) visible = visible.logical_and(distance.lt(window_));
    visible = visible.unsqueeze(0);  // (1, q_len, k_len)
    if (doc_ids_.defined()) {
      auto query_docs = doc_ids_.narrow(1, b.q_start + past_, b.q_len).unsqueeze(2);  // (B, q_len, 1)
      auto key_docs = doc_ids_.narrow(1, b.k_start, b.k_len).unsqueeze(1);             // (B, 1, k_len)
      visible = visible.logical_and(query_docs.eq(key_docs));                          // (B, q_len, k_len)
    }
    auto bias = at::zeros(visible.sizes(), at::TensorOptions().dtype(compute_).device(device_))
                    .masked_fill_(visible.logical_not(), -std::numeric_limits<double>::infinity())
                    .view({visible.size(0), 1, b.q_len, 1, b.k_len});
    if (reusable) {
      cached_bias_ = bias;
      cached_key_ = std::make_tuple(b.q_len, b.k_len, shift);
    }
    return bias;
  }

  // Logits of one block, (B·Hkv, q_len·rep, k_len):  s = softcap(scale · q kᵀ) + bias − row_offset.
  // q_block: (B·Hkv, q_len·rep, D); k_block: (B·Hkv, k_len, D); row_offset: (B·Hkv, q_len·rep) or undefined.
  // With soft-capping, *tanh_values receives tanh(scale · q kᵀ / c) (same shape), for the derivative.
  at::Tensor logits(const Block& b, const at::Tensor& q_block, const at::Tensor& k_block, const at::Tensor& bias,
                    const at::Tensor& row_offset, at::Tensor* tanh_values) const {
    const std::vector<int64_t> split = {batch_, kv_heads_, b.q_len, rep_, b.k_len};
    at::Tensor base = bias;  // (Bd, 1, q_len, 1, k_len) broadcast against split
    if (row_offset.defined()) base = at::sub(bias, row_offset.view({batch_, kv_heads_, b.q_len, rep_, 1}));
    if (softcap_ > 0.0) {
      auto t = at::bmm(q_block, k_block.transpose(1, 2)).mul_(scale_ / softcap_).tanh_();
      if (tanh_values) *tanh_values = t;
      return at::add(base, t.view(split), softcap_).view({batch_ * kv_heads_, b.q_len * rep_, b.k_len});
    }
    // Mask and scale fused into one GEMM: s = (bias − offset) + scale · q kᵀ, accumulated in place into a
    // fresh tensor (at::sub already made one; the shared bias itself must never be written).
    auto scores = row_offset.defined() ? base : at::empty(split, base.options()).copy_(base);
    auto scores3 = scores.view({batch_ * kv_heads_, b.q_len * rep_, b.k_len});
    scores3.baddbmm_(q_block, k_block.transpose(1, 2), /*beta=*/1.0, /*alpha=*/scale_);
    return scores3;
  }

  double scale() const { return scale_; }
  double softcap() const { return softcap_; }

 private:
  int64_t batch_, kv_heads_, rep_, n_queries_, past_, window_, block_size_;
  double scale_, softcap_;
  at::ScalarType compute_;
  at::Device device_;
  at::Tensor doc_ids_;  // (B, Nk) int64 or undefined
  at::Tensor cached_bias_;
  std::tuple<int64_t, int64_t, int64_t> cached_key_{-1, -1, -1};
};

}  // namespace

at::ScalarType attention_compute_type(at::ScalarType input) {
  return input == at::kDouble ? at::kDouble : at::kFloat;
}

double attention_scale(const AttentionOptions& options, int64_t head_dim) {
  return options.scale > 0.0 ? options.scale : 1.0 / std::sqrt(static_cast<double>(head_dim));
}

void check_attention_inputs(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                            const AttentionOptions& options, const at::Tensor& doc_ids) {
  SWARMT_CHECK_INPUT(q.defined() && k.defined() && v.defined(), "attention: q, k and v must be defined");
  SWARMT_CHECK_INPUT(q.dim() == 4 && k.dim() == 4 && v.dim() == 4,
                     "attention: q, k, v must be (B, H, N, D); got q ", q.sizes(), ", k ", k.sizes(), ", v ",
                     v.sizes());
  SWARMT_CHECK_INPUT(at::isFloatingType(q.scalar_type()) && q.scalar_type() == k.scalar_type() &&
                         q.scalar_type() == v.scalar_type(),
                     "attention: q, k, v must share one floating-point dtype; got ", q.scalar_type(), ", ",
                     k.scalar_type(), ", ", v.scalar_type());
  SWARMT_CHECK_INPUT(q.device() == k.device() && q.device() == v.device(),
                     "attention: q, k, v must be on one device");
  SWARMT_CHECK_INPUT(k.sizes() == v.sizes(), "attention: k ", k.sizes(), " and v ", v.sizes(),
                     " must have the same shape");
  SWARMT_CHECK_INPUT(q.size(0) == k.size(0) && q.size(3) == k.size(3),
                     "attention: batch and head_dim of q ", q.sizes(), " and k ", k.sizes(), " differ");
  SWARMT_CHECK_INPUT(k.size(1) > 0 && q.size(1) % k.size(1) == 0, "attention: query heads (", q.size(1),
                     ") must be a multiple of kv heads (", k.size(1), ")");
  SWARMT_CHECK_INPUT(k.size(2) >= q.size(2), "attention: fewer keys (", k.size(2), ") than queries (", q.size(2),
                     "); queries continue after the keys before them");
  SWARMT_CHECK_INPUT(options.window >= 0, "attention: window must be >= 0 (0 = full), got ", options.window);
  SWARMT_CHECK_INPUT(options.block_size >= 1, "attention: block_size must be >= 1, got ", options.block_size);
  SWARMT_CHECK_INPUT(options.scale >= 0.0 && std::isfinite(options.scale),
                     "attention: scale must be >= 0 (0 = 1/sqrt(D)), got ", options.scale);
  SWARMT_CHECK_INPUT(options.softcap >= 0.0 && std::isfinite(options.softcap),
                     "attention: softcap must be >= 0 (0 = off), got ", options.softcap);
  if (doc_ids.defined()) {
    SWARMT_CHECK_INPUT(doc_ids.dim() == 2 && doc_ids.size(0) == k.size(0) && doc_ids.size(1) == k.size(2) &&
                           !at::isFloatingType(doc_ids.scalar_type()) && doc_ids.scalar_type() != at::kBool,
                       "attention: doc_ids must be integers of shape (B, Nk) = (", k.size(0), ", ", k.size(2),
                       "), got ", doc_ids.scalar_type(), " ", doc_ids.sizes());
  }
}

BlockedForwardResult blocked_attention_forward(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                               const at::Tensor& doc_ids, const AttentionOptions& options) {
  BandedBlocks blocks(q, k, doc_ids, options);
  const int64_t batch = q.size(0), kv_heads = k.size(1), rep = blocks.rep();
  const auto compute = blocks.compute_type();
  auto q_grouped = group_query_heads(q.to(compute), kv_heads);                   // (B·Hkv, Nq·rep, D)
  auto k_flat = flatten_kv_heads(k.to(compute));  // (B·Hkv, Nk, D)
  auto v_flat = flatten_kv_heads(v.to(compute));
  auto out = at::empty_like(q_grouped);                                        // (B·Hkv, Nq·rep, D)
  auto lse = at::empty({batch * kv_heads, q_grouped.size(1)}, q_grouped.options());  // (B·Hkv, Nq·rep)

  for (int64_t index = 0; index < blocks.num_blocks(); ++index) {
    const auto b = blocks.block(index);
    auto q_block = q_grouped.narrow(1, b.q_start * rep, b.q_len * rep);  // (B·Hkv, R, D), R = q_len·rep
    auto k_block = k_flat.narrow(1, b.k_start, b.k_len);                // (B·Hkv, K, D)
    auto v_block = v_flat.narrow(1, b.k_start, b.k_len);
    auto weights = blocks.logits(b, q_block, k_block, blocks.bias(b), {}, nullptr);  // (B·Hkv, R, K)
    auto row_max = at::amax(weights, {-1}, /*keepdim=*/true);                      // (B·Hkv, R, 1)
    weights.sub_(row_max).exp_();                     // unnormalised probabilities, max 1
    auto row_sum = weights.sum(-1, /*keepdim=*/true);  // (B·Hkv, R, 1), >= 1: the query's own key is visible
    auto out_block = out.narrow(1, b.q_start * rep, b.q_len * rep);
    at::bmm_out(out_block, weights, v_block);
    out_block.div_(row_sum);
    lse.narrow(1, b.q_start * rep, b.q_len * rep).copy_(row_max.add_(row_sum.log_()).squeeze(-1));
  }
  return {ungroup_query_heads(out, batch, kv_heads, rep).to(q.scalar_type()), lse};
}

BlockedGradients blocked_attention_backward(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                            const at::Tensor& doc_ids, const at::Tensor& out,
                                            const at::Tensor& lse, const at::Tensor& grad_out,
                                            const AttentionOptions& options) {
  BandedBlocks blocks(q, k, doc_ids, options);
  const int64_t batch = q.size(0), kv_heads = k.size(1), rep = blocks.rep();
  const auto compute = blocks.compute_type();
  const double scale = blocks.scale();
  auto q_grouped = group_query_heads(q.to(compute), kv_heads);         // (B·Hkv, Nq·rep, D)
  auto grad_grouped = group_query_heads(grad_out.to(compute), kv_heads);  // (B·Hkv, Nq·rep, D)
  // rowsum(dO ⊙ O) per query row: (B, Hq, Nq) -> (B·Hkv, Nq·rep)
  auto delta = group_query_heads((grad_out.to(compute) * out.to(compute)).sum(-1), kv_heads);
  auto k_flat = flatten_kv_heads(k.to(compute));  // (B·Hkv, Nk, D)
  auto v_flat = flatten_kv_heads(v.to(compute));
  auto dq = at::empty_like(q_grouped);  // every row written once
  auto dk = at::zeros(k_flat.sizes(), k_flat.options());  // bands overlap: accumulated
  auto dv = at::zeros(v_flat.sizes(), v_flat.options());

  for (int64_t index = 0; index < blocks.num_blocks(); ++index) {
    const auto b = blocks.block(index);
    const int64_t row_start = b.q_start * rep, rows = b.q_len * rep;
    auto q_block = q_grouped.narrow(1, row_start, rows);     // (B·Hkv, R, D)
    auto grad_block = grad_grouped.narrow(1, row_start, rows);  // (B·Hkv, R, D)
    auto k_block = k_flat.narrow(1, b.k_start, b.k_len);     // (B·Hkv, K, D)
    auto v_block = v_flat.narrow(1, b.k_start, b.k_len);
    at::Tensor tanh_values;
    auto probs = blocks.logits(b, q_block, k_block, blocks.bias(b), lse.narrow(1, row_start, rows), &tanh_values)
                     .exp_();                                            // P = exp(s − lse): (B·Hkv, R, K)
    auto grad_scores = at::bmm(grad_block, v_block.transpose(1, 2));   // dP = dO Vᵀ
    grad_scores.sub_(delta.narrow(1, row_start, rows).unsqueeze(-1)).mul_(probs);  // dS = P ⊙ (dP − Δ)
    if (tanh_values.defined()) grad_scores.mul_(tanh_values.square_().neg_().add_(1.0));  // d(c·tanh(x/c))/dx
    auto dq_block = dq.narrow(1, row_start, rows);
    at::bmm_out(dq_block, grad_scores, k_block);
    dq_block.mul_(scale);
    dk.narrow(1, b.k_start, b.k_len).baddbmm_(grad_scores.transpose(1, 2), q_block, /*beta=*/1.0, /*alpha=*/scale);
    dv.narrow(1, b.k_start, b.k_len).baddbmm_(probs.transpose(1, 2), grad_block);
  }
  return {ungroup_query_heads(dq, batch, kv_heads, rep).to(q.scalar_type()),
          dk.view(k.sizes()).to(k.scalar_type()), dv.view(v.sizes()).to(v.scalar_type())};
}

}  // namespace swarmt::ops::detail
