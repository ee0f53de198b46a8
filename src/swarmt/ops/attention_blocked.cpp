// Blocked causal / sliding-window attention: forward and backward kernels (see attention_blocked.h).
//
// Per query block, with s = softcap(scale · q kᵀ) + bias (bias 0 where the key is visible, −inf else):
//   forward    P = softmax(s),  o = P V,  lse = m + log Σ_j exp(s_ij − m) = m − log P_i,argmax  (m = max_j s_ij)
//   backward   P = exp(s − lse),  dS = P ⊙ (dO Vᵀ − rowsum(dO ⊙ O)),  dQ = scale·dS K,
//              dK += scale·dSᵀ Q,  dV += Pᵀ dO
// A block sees its whole key band at once, so the softmax needs no online rescaling across key tiles: the
// band is at most block + window − 1 keys long (window 0: all earlier keys, one row of scores per query,
// still never N×N).
#include "swarmt/ops/attention_blocked.h"

#include <array>
#include <cmath>
#include <functional>
#include <limits>
#include <tuple>
#include <utility>
#include <vector>

#include "swarmt/core/error.h"
#include "swarmt/ops/attention_band_cpu.h"
#include "swarmt/ops/parallel.h"

namespace swarmt::ops::detail {
namespace {

// Every row of (B, N) `times` times in a row: (B·times, N) contiguous, as repeat_interleave(times, 0)
// (which builds an index and gathers; this is one copy).
at::Tensor repeat_rows(const at::Tensor& rows, int64_t times) {
  return rows.unsqueeze(1).expand({rows.size(0), times, rows.size(1)}).reshape({rows.size(0) * times, rows.size(1)});
}

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
  using Block = BandBlock;

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
    // Document of every key, per flattened (batch, kv head) row: (B·Hkv, Nk).
    if (doc_ids.defined()) head_doc_ids_ = repeat_rows(doc_ids.to(device_, at::kLong), kv_heads_);
  }

  int64_t num_blocks() const { return (n_queries_ + block_size_ - 1) / block_size_; }
  int64_t rep() const { return rep_; }
  at::ScalarType compute_type() const { return compute_; }

  Block block(int64_t index) const { return band_block(index, block_size_, n_queries_, past_, window_); }

  // Additive mask of block b for the flattened heads [head_begin, head_end): (Hd, q_len, 1, k_len) with
  // Hd = head_end − head_begin when there are documents, else 1 (broadcast). 0 where query i may see key j
  // (0 <= pos_i − pos_j < window, same document), −inf elsewhere.
  at::Tensor bias(const Block& b, int64_t head_begin, int64_t head_end) const {
    const int64_t shift = b.q_start + past_ - b.k_start;  // pos_i − pos_j for the block's first query and key
    auto index_options = at::TensorOptions().dtype(at::kLong).device(device_);
    auto distance = at::arange(b.q_len, index_options).unsqueeze(1) - at::arange(b.k_len, index_options).unsqueeze(0) +
                    shift;  // (q_len, k_len): pos_i − pos_j
    auto visible = distance.ge(0);
    if (window_ > 0) visible = visible.logical_and(distance.lt(window_));
    visible = visible.unsqueeze(0);  // (1, q_len, k_len)
    if (head_doc_ids_.defined()) {
      auto docs = head_doc_ids_.narrow(0, head_begin, head_end - head_begin);       // (Hd, Nk)
      auto query_docs = docs.narrow(1, b.q_start + past_, b.q_len).unsqueeze(2);  // (Hd, q_len, 1)
      auto key_docs = docs.narrow(1, b.k_start, b.k_len).unsqueeze(1);            // (Hd, 1, k_len)
      visible = visible.logical_and(query_docs.eq(key_docs));                     // (Hd, q_len, k_len)
    }
    return at::zeros(visible.sizes(), at::TensorOptions().dtype(compute_).device(device_))
        .masked_fill_(visible.logical_not(), -std::numeric_limits<double>::infinity())
        .unsqueeze(2);
  }

  // Whether bias() depends on the heads (documents) or only on the block geometry (shareable).
  bool bias_depends_on_heads() const { return head_doc_ids_.defined(); }
  // Key identifying blocks with the same head-independent bias.
  std::tuple<int64_t, int64_t, int64_t> bias_key(const Block& b) const {
    return {b.q_len, b.k_len, b.q_start + past_ - b.k_start};
  }

  // Most elements a per-block (heads, q_len·rep, k_len) tensor can have, per head: sizes the scratch.
  int64_t max_block_elements_per_head() const {
    const int64_t n_keys = n_queries_ + past_;
    const int64_t max_keys = window_ > 0 ? std::min(n_keys, block_size_ + window_ - 1) : n_keys;
    return std::min(block_size_, n_queries_) * rep_ * max_keys;
  }
  int64_t flat_heads() const { return batch_ * kv_heads_; }

  // Logits of one block for H flattened heads, s = softcap(scale · q kᵀ) + bias − row_offset, written into
  // `scores` (H, q_len·rep, k_len). q_block: (H, q_len·rep, D); k_block: (H, k_len, D); bias from bias();
  // row_offset: (H, q_len·rep) or undefined. With soft-capping, `tanh_values` (same shape as scores)
  // receives tanh(scale · q kᵀ / c) for the derivative.
  void logits(const Block& b, const at::Tensor& q_block, const at::Tensor& k_block, const at::Tensor& bias,
              const at::Tensor& row_offset, at::Tensor& scores, at::Tensor& tanh_values) const {
    const int64_t heads = scores.size(0);
    auto scores4 = scores.view({heads, b.q_len, rep_, b.k_len});  // bias: (1 or H, q_len, 1, k_len)
    if (row_offset.defined())
      at::sub_out(scores4, bias, row_offset.view({heads, b.q_len, rep_, 1}));
    else
      scores4.copy_(bias);
    if (softcap_ > 0.0) {
      at::bmm_out(tanh_values, q_block, k_block.transpose(1, 2));
      tanh_values.mul_(scale_ / softcap_).tanh_();
      scores.add_(tanh_values, softcap_);
    } else {
      // Mask and scale fused into the GEMM: s = (bias − offset) + scale · q kᵀ.
      scores.baddbmm_(q_block, k_block.transpose(1, 2), /*beta=*/1.0, /*alpha=*/scale_);
    }
  }

  double scale() const { return scale_; }
  double softcap() const { return softcap_; }

 private:
  int64_t batch_, kv_heads_, rep_, n_queries_, past_, window_, block_size_;
  double scale_, softcap_;
  at::ScalarType compute_;
  at::Device device_;
  at::Tensor head_doc_ids_;  // (B·Hkv, Nk) int64 or undefined
};

// The mask of the previous block, reused while the geometry repeats (every interior block of a sliding
// window has the same one). One per worker: bias() itself is stateless.
class BiasCache {
 public:
  const at::Tensor& get(const BandedBlocks& blocks, const BandedBlocks::Block& b, int64_t head_begin,
                        int64_t head_end) {
    if (blocks.bias_depends_on_heads() || !bias_.defined() || key_ != blocks.bias_key(b)) {
      bias_ = blocks.bias(b, head_begin, head_end);
      key_ = blocks.bias_key(b);
    }
    return bias_;
  }

 private:
  at::Tensor bias_;
  std::tuple<int64_t, int64_t, int64_t> key_{-1, -1, -1};
};

// Runs fn(head_begin, head_end) over ranges of the B·Hkv independent (batch, kv head) rows. On CPU the
// ranges run in parallel and everything inside runs on its worker thread: one fork/join per call instead
// of one per elementwise op and GEMM, which on few, shared cores cost more than the work itself.
void for_each_head_range(int64_t heads, const at::Device& device, const std::function<void(int64_t, int64_t)>& fn) {
  if (device.is_cpu())
    parallel_for(0, heads, /*grain_size=*/1, fn);
  else
    fn(0, heads);  // accelerators: one batched launch per op over all heads
}

// The forward's query blocks are independent too: with fewer (batch, kv head) rows than threads (one kv
// head, batch 1: Gemma-3 style MQA at inference), it splits the blocks instead.
// fn(head_begin, head_end, block_begin, block_end).
void for_each_forward_range(int64_t heads, int64_t blocks, const at::Device& device,
                            const std::function<void(int64_t, int64_t, int64_t, int64_t)>& fn) {
  if (device.is_cpu() && heads < at::get_num_threads())
    parallel_for(0, blocks, /*grain_size=*/1, [&](int64_t begin, int64_t end) { fn(0, heads, begin, end); });
  else
    for_each_head_range(heads, device, [&](int64_t begin, int64_t end) { fn(begin, end, 0, blocks); });
}

// Scratch tensors reused by every block: fresh per-block allocations cost page faults and memsets that
// showed up as a large share of the kernel's time. get() views the front of one flat buffer.
class BlockScratch {
 public:
  BlockScratch(int64_t capacity, at::TensorOptions options) : capacity_(capacity), options_(options) {}
  at::Tensor get(size_t slot, at::IntArrayRef sizes) {
    if (!buffers_[slot].defined()) buffers_[slot] = at::empty({capacity_}, options_);
    int64_t numel = 1;
    for (int64_t size : sizes) numel *= size;
    SWARMT_CHECK(numel <= capacity_, "block scratch too small");
    return buffers_[slot].narrow(0, 0, numel).view(sizes);
  }

 private:
  int64_t capacity_;
  at::TensorOptions options_;
  std::array<at::Tensor, 3> buffers_;
};

enum ScratchSlot : size_t { kScores = 0, kSecond = 1, kTanh = 2 };

// The raw CPU kernels' view of the grouped tensors (compute type; q contiguous, k and v rows unit-stride
// with one layout for both). head_docs: (B·Hkv, Nk) int64 contiguous or undefined.
template <typename T>
BandProblem<T> band_problem(const at::Tensor& q_grouped, const at::Tensor& k_flat, const at::Tensor& v_flat,
                            const at::Tensor& head_docs, int64_t rep, const AttentionOptions& options) {
  SWARMT_CHECK(q_grouped.is_contiguous() && k_flat.strides() == v_flat.strides() && k_flat.stride(2) == 1,
               "attention: unexpected layout for the CPU kernels");
  BandProblem<T> p;
  p.rep = rep;
  p.n_queries = q_grouped.size(1) / rep;
  p.n_keys = k_flat.size(1);
  p.past = p.n_keys - p.n_queries;
  p.window = options.window;
  p.block_size = options.block_size;
  p.head_dim = q_grouped.size(2);
  p.scale = attention_scale(options, p.head_dim);
  p.softcap = options.softcap;
  p.q = q_grouped.data_ptr<T>();
  p.k = k_flat.data_ptr<T>();
  p.v = v_flat.data_ptr<T>();
  p.kv_head_stride = k_flat.stride(0);
  p.kv_row_stride = k_flat.stride(1);
  if (head_docs.defined()) p.docs = head_docs.data_ptr<int64_t>();
  return p;
}

// The document of every key per flattened (batch, kv head) row, (B·Hkv, Nk) contiguous; undefined if none.
at::Tensor documents_per_head(const at::Tensor& doc_ids, int64_t kv_heads) {
  if (!doc_ids.defined()) return {};
  return repeat_rows(doc_ids.to(at::kCPU, at::kLong), kv_heads);
}

// k and v with one layout (both views of one cache, or both contiguous).
std::pair<at::Tensor, at::Tensor> same_layout(at::Tensor k_flat, at::Tensor v_flat) {
  if (k_flat.strides() != v_flat.strides()) return {k_flat.contiguous(), v_flat.contiguous()};
  return {k_flat, v_flat};
}

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

  if (q.device().is_cpu() && attention_band_kernels()) {
    std::tie(k_flat, v_flat) = same_layout(k_flat, v_flat);
    const at::Tensor head_docs = documents_per_head(doc_ids, kv_heads);
    AT_DISPATCH_FLOATING_TYPES(compute, "band_forward_cpu", [&] {
      const auto problem = band_problem<scalar_t>(q_grouped, k_flat, v_flat, head_docs, rep, options);
      for_each_forward_range(blocks.flat_heads(), blocks.num_blocks(), q.device(),
                             [&](int64_t head_begin, int64_t head_end, int64_t block_begin, int64_t block_end) {
        band_forward_cpu(problem, out.data_ptr<scalar_t>(), lse.data_ptr<scalar_t>(), head_begin, head_end,
                         block_begin, block_end);
      });
    });
    return {ungroup_query_heads(out, batch, kv_heads, rep).to(q.scalar_type()), lse};
  }

  for_each_forward_range(blocks.flat_heads(), blocks.num_blocks(), q.device(),
                         [&](int64_t head_begin, int64_t head_end, int64_t block_begin, int64_t block_end) {
    const int64_t heads = head_end - head_begin;
    auto q_heads = q_grouped.narrow(0, head_begin, heads);
    auto k_heads = k_flat.narrow(0, head_begin, heads);
    auto v_heads = v_flat.narrow(0, head_begin, heads);
    auto out_heads = out.narrow(0, head_begin, heads);
    auto lse_heads = lse.narrow(0, head_begin, heads);
    BlockScratch scratch(heads * blocks.max_block_elements_per_head(), q_grouped.options());
    BiasCache bias;
    for (int64_t index = block_begin; index < block_end; ++index) {
      const auto b = blocks.block(index);
      const int64_t row_start = b.q_start * rep, rows = b.q_len * rep;
      const std::vector<int64_t> block_sizes = {heads, rows, b.k_len};
      auto q_block = q_heads.narrow(1, row_start, rows);   // (H, R, D), R = q_len·rep
      auto k_block = k_heads.narrow(1, b.k_start, b.k_len);  // (H, K, D)
      auto v_block = v_heads.narrow(1, b.k_start, b.k_len);
      auto scores = scratch.get(kScores, block_sizes);       // (H, R, K)
      auto tanh_values = blocks.softcap() > 0.0 ? scratch.get(kTanh, block_sizes) : at::Tensor();
      blocks.logits(b, q_block, k_block, bias.get(blocks, b, head_begin, head_end), {}, scores, tanh_values);
      // lse = m + log l with l = Σ_j exp(s_j − m) = 1 / p_argmax: one fused softmax gives both P and lse.
      auto [row_max, row_argmax] = scores.max(-1, /*keepdim=*/true);  // (H, R, 1)
      auto probs = scratch.get(kSecond, block_sizes);
      at::_softmax_out(probs, scores, -1, /*half_to_float=*/false);
      auto out_block = out_heads.narrow(1, row_start, rows);
      at::bmm_out(out_block, probs, v_block);
      lse_heads.narrow(1, row_start, rows).copy_(row_max.sub_(probs.gather(-1, row_argmax).log_()).squeeze(-1));
    }
  });
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
  auto out_grouped = group_query_heads(out.to(compute), kv_heads);      // (B·Hkv, Nq·rep, D)
  auto k_flat = flatten_kv_heads(k.to(compute));  // (B·Hkv, Nk, D)
  auto v_flat = flatten_kv_heads(v.to(compute));
  auto dq = at::empty_like(q_grouped);  // every row written once
  // Bands overlap, so dK and dV accumulate. Bands only move forward, so each block zeroes the keys it is
  // the first to reach just before adding to them (cache-hot, instead of a separate pass over all keys).
  auto dk = at::empty(k_flat.sizes(), k_flat.options());
  auto dv = at::empty(v_flat.sizes(), v_flat.options());

  if (q.device().is_cpu() && attention_band_kernels()) {
    std::tie(k_flat, v_flat) = same_layout(k_flat, v_flat);
    const at::Tensor head_docs = documents_per_head(doc_ids, kv_heads);
    const at::Tensor lse_c = lse.to(compute).contiguous();
    AT_DISPATCH_FLOATING_TYPES(compute, "band_backward_cpu", [&] {
      const auto problem = band_problem<scalar_t>(q_grouped, k_flat, v_flat, head_docs, rep, options);
      for_each_head_range(blocks.flat_heads(), q.device(), [&](int64_t head_begin, int64_t head_end) {
        band_backward_cpu(problem, out_grouped.data_ptr<scalar_t>(), lse_c.data_ptr<scalar_t>(),
                          grad_grouped.data_ptr<scalar_t>(), dq.data_ptr<scalar_t>(), dk.data_ptr<scalar_t>(),
                          dv.data_ptr<scalar_t>(), head_begin, head_end);
      });
    });
    return {ungroup_query_heads(dq, batch, kv_heads, rep).to(q.scalar_type()),
            dk.view(k.sizes()).to(k.scalar_type()), dv.view(v.sizes()).to(v.scalar_type())};
  }

  for_each_head_range(blocks.flat_heads(), q.device(), [&](int64_t head_begin, int64_t head_end) {
    const int64_t heads = head_end - head_begin;
    auto q_heads = q_grouped.narrow(0, head_begin, heads);
    auto grad_heads = grad_grouped.narrow(0, head_begin, heads);
    auto out_heads = out_grouped.narrow(0, head_begin, heads);
    auto lse_heads = lse.narrow(0, head_begin, heads);
    auto k_heads = k_flat.narrow(0, head_begin, heads);
    auto v_heads = v_flat.narrow(0, head_begin, heads);
    auto dq_heads = dq.narrow(0, head_begin, heads);
    auto dk_heads = dk.narrow(0, head_begin, heads);
    auto dv_heads = dv.narrow(0, head_begin, heads);
    BlockScratch scratch(heads * blocks.max_block_elements_per_head(), q_grouped.options());
    BiasCache bias;
    int64_t keys_zeroed = 0;  // dK, dV rows [0, keys_zeroed) are initialised
    for (int64_t index = 0; index < blocks.num_blocks(); ++index) {
      const auto b = blocks.block(index);
      const int64_t row_start = b.q_start * rep, rows = b.q_len * rep;
      const std::vector<int64_t> block_sizes = {heads, rows, b.k_len};
      const int64_t k_end = b.k_start + b.k_len;
      dk_heads.narrow(1, keys_zeroed, k_end - keys_zeroed).zero_();  // includes keys no query ever sees
      dv_heads.narrow(1, keys_zeroed, k_end - keys_zeroed).zero_();
      keys_zeroed = k_end;
      auto q_block = q_heads.narrow(1, row_start, rows);        // (H, R, D)
      auto grad_block = grad_heads.narrow(1, row_start, rows);  // (H, R, D)
      auto k_block = k_heads.narrow(1, b.k_start, b.k_len);     // (H, K, D)
      auto v_block = v_heads.narrow(1, b.k_start, b.k_len);
      auto probs = scratch.get(kScores, block_sizes);  // (H, R, K)
      auto tanh_values = blocks.softcap() > 0.0 ? scratch.get(kTanh, block_sizes) : at::Tensor();
      blocks.logits(b, q_block, k_block, bias.get(blocks, b, head_begin, head_end),
                    lse_heads.narrow(1, row_start, rows), probs, tanh_values);
      probs.exp_();  // P = exp(s − lse)
      // dS = P ⊙ (dO Vᵀ − Δ), Δ = rowsum(dO ⊙ O): start from −Δ and let the GEMM accumulate dO Vᵀ onto it.
      auto negative_delta = at::mul(grad_block, out_heads.narrow(1, row_start, rows)).sum(-1, true).neg_();  // (H, R, 1)
      auto grad_scores = scratch.get(kSecond, block_sizes);
      grad_scores.copy_(negative_delta.expand(block_sizes));
      grad_scores.baddbmm_(grad_block, v_block.transpose(1, 2)).mul_(probs);
      if (tanh_values.defined()) grad_scores.mul_(tanh_values.square_().neg_().add_(1.0));  // d(c·tanh(x/c))/dx
      auto dq_block = dq_heads.narrow(1, row_start, rows);
      at::bmm_out(dq_block, grad_scores, k_block);
      dq_block.mul_(scale);
      dk_heads.narrow(1, b.k_start, b.k_len)
          .baddbmm_(grad_scores.transpose(1, 2), q_block, /*beta=*/1.0, /*alpha=*/scale);
      dv_heads.narrow(1, b.k_start, b.k_len).baddbmm_(probs.transpose(1, 2), grad_block);
    }
    dk_heads.narrow(1, keys_zeroed, dk_heads.size(1) - keys_zeroed).zero_();  // only without queries
    dv_heads.narrow(1, keys_zeroed, dv_heads.size(1) - keys_zeroed).zero_();
  });
  return {ungroup_query_heads(dq, batch, kv_heads, rep).to(q.scalar_type()),
          dk.view(k.sizes()).to(k.scalar_type()), dv.view(v.sizes()).to(v.scalar_type())};
}

}  // namespace swarmt::ops::detail
