// KV cache for streaming attention: a ring of `capacity` slots for sliding-window layers, or a growing
// cache for full attention (specs/swax.md §4, "ring-buffer KV cache").
//
// Ring: the key of absolute position p lives in slot p % capacity, written before the query at p attends,
// with its position recorded, so the ring can be read in any order (decode) or unrolled into position
// order (chunked prefill). Keys are stored after RoPE: nothing is re-rotated when the ring wraps.

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "swarmt/core/error.h"
#include "swarmt/core/memory_budget.h"
#include "swarmt/ops/attention.h"
#include "swarmt/ops/attention_blocked.h"
#include "swarmt/ops/matvec.h"
#include "swarmt/ops/vector_exp.h"
#include "swarmt/ops/hot_pool.h"

namespace swarmt::ops {
namespace {

// The `count` consecutive positions from `first_position` of a ring (B, Hkv, capacity, D), in position
// order: one slice, or two when the range wraps past the last slot. Requires count <= capacity.
at::Tensor ring_read(const at::Tensor& ring, int64_t first_position, int64_t count) {
  const int64_t capacity = ring.size(2), first_slot = first_position % capacity;
  const int64_t head = std::min(count, capacity - first_slot);
  if (head == count) return ring.narrow(2, first_slot, count);
  return at::cat({ring.narrow(2, first_slot, head), ring.narrow(2, 0, count - head)}, 2);
}

// Writes `values` (B, Hkv, count, D), holding positions first_position ..., into their slots of the ring.
void ring_write(at::Tensor& ring, int64_t first_position, const at::Tensor& values) {
  const int64_t capacity = ring.size(2), count = values.size(2), first_slot = first_position % capacity;
  const int64_t head = std::min(count, capacity - first_slot);
  ring.narrow(2, first_slot, head).copy_(values.narrow(2, 0, head));
  if (head < count) ring.narrow(2, 0, count - head).copy_(values.narrow(2, head, count - head));
}

// Records the absolute positions first_position ... first_position + count − 1 in their ring slots.
void ring_write_positions(at::Tensor& positions, int64_t first_position, int64_t count) {
  auto values = at::arange(first_position, first_position + count, positions.options()).view({1, 1, count, 1});
  auto as_ring = positions.view({1, 1, -1, 1});
  ring_write(as_ring, first_position, values);
}

// Growing cache: makes room for `needed` slots, doubling so that appending N tokens copies O(N) in total.
// Slots of a growing cache once it has room for `needed` tokens: it at least doubles, so that decoding
// token by token copies the cache O(log N) times.
int64_t grown_slots(int64_t slots, int64_t needed) {
  return needed <= slots ? slots : std::max<int64_t>({needed, 2 * slots, 16});
}

void reserve_slots(KVCache& cache, int64_t needed) {
  const int64_t slots = cache.k.size(2);
  if (needed <= slots) return;
  const int64_t grown = grown_slots(slots, needed);
  auto grow = [&](const at::Tensor& old, int64_t dim, const at::Scalar& fill) {
    std::vector<int64_t> sizes = old.sizes().vec();
    sizes[dim] = grown;
    auto fresh = at::full(sizes, fill, old.options());
    fresh.narrow(dim, 0, cache.seen).copy_(old.narrow(dim, 0, cache.seen));
    return fresh;
  };
  cache.k = grow(cache.k, 2, 0);
  cache.v = grow(cache.v, 2, 0);
  cache.positions = grow(cache.positions, 0, -1);
}

// The token's key and value (B, Hkv, 1, D) copied into slot `slot` of a CPU cache of the same dtype,
// without a dispatch per copy (decoding does this per layer and token). False: not that case.
bool write_token_in_place(KVCache& cache, int64_t slot, const at::Tensor& k_new, const at::Tensor& v_new) {
  const auto& k = cache.k;
  if (!k.device().is_cpu() || k_new.scalar_type() != k.scalar_type() || v_new.scalar_type() != k.scalar_type() ||
      !k_new.device().is_cpu() || !v_new.device().is_cpu() || !k.is_contiguous() || !cache.v.is_contiguous() ||
      !cache.positions.is_contiguous())
    return false;
  const at::Tensor kc = k_new.contiguous(), vc = v_new.contiguous();
  const int64_t heads = k.size(0) * k.size(1), slots = k.size(2), d = k.size(3);
  const size_t row = static_cast<size_t>(d) * k.element_size();
  auto* kd = static_cast<char*>(k.data_ptr());
  auto* vd = static_cast<char*>(cache.v.data_ptr());
  const auto* ks = static_cast<const char*>(kc.data_ptr());
  const auto* vs = static_cast<const char*>(vc.data_ptr());
  for (int64_t h = 0; h < heads; ++h) {  // (b, g) flattened: row h of the new token, slot of head h
    std::memcpy(kd + (h * slots + slot) * row, ks + h * row, row);
    std::memcpy(vd + (h * slots + slot) * row, vs + h * row, row);
  }
  return true;
}

// t in `dtype`; t itself (no dispatch) when it already is.
at::Tensor in_dtype(const at::Tensor& t, at::ScalarType dtype) { return t.scalar_type() == dtype ? t : t.to(dtype); }

// One query per head against an unordered set of slots (softmax does not care about key order).
// q: (B, Hq, 1, D); keys, values: (B, Hkv, S, D); visible: bool (S) or undefined (all visible).
// The general path: any dtype, any device.
at::Tensor attend_single_query_aten(const at::Tensor& q, const at::Tensor& keys, const at::Tensor& values,
                                    const at::Tensor& visible, const AttentionOptions& options) {
  const int64_t batch = q.size(0), kv_heads = keys.size(1), rep = q.size(1) / kv_heads, head_dim = q.size(3);
  const auto compute = detail::attention_compute_type(q.scalar_type());
  auto grouped = q.to(compute).reshape({batch, kv_heads, rep, head_dim});  // query head h uses kv head h / rep
  auto scores = at::matmul(grouped, keys.to(compute).transpose(-1, -2)) *
                detail::attention_scale(options, head_dim);  // (B, Hkv, rep, S)
  if (options.softcap > 0.0) scores = at::tanh(scores / options.softcap) * options.softcap;
  if (visible.defined()) scores.masked_fill_(visible.logical_not(), -std::numeric_limits<double>::infinity());
  auto out = at::matmul(at::softmax(scores, -1), values.to(compute));  // (B, Hkv, rep, D)
  return out.reshape({batch, kv_heads * rep, 1, head_dim}).to(q.scalar_type());
}

// The decode path on CPU for fp32 and bf16: the same softmax(q Kᵀ · scale) V in fp32, read straight from
// the cache slices (no fp32 copy of the cache, no GEMM dispatch for a few rows). One task per kv head:
// its `rep` query heads' scores are one matrix-vector product with that head's keys (the decoding
// kernel of ops/matvec.h), their outputs one pass over its values. Decoding calls this once per layer
// and token, so its fixed cost matters as much as its loops.

template <typename T>
struct HeadRows {  // the rows of kv head g of batch b start at base + b·s0 + g·s1, d values each
  const T* base;
  int64_t s0, s1;
  const T* at(int64_t b, int64_t g) const { return base + b * s0 + g * s1; }
};

// q: B·Hq rows of d (the rep query heads of kv head g are rows g·rep ...); `slots` keys and values per
// (b, kv head); visible: one flag per slot, or null (all visible); out: B·Hq rows of d in fp32.
template <typename T>
void single_query_attention(const T* q, HeadRows<T> keys, HeadRows<T> values, const unsigned char* visible,
                            int64_t batch, int64_t q_heads, int64_t kv_heads, int64_t slots, int64_t d, float scale,
                            float softcap, float* out) {
  const int64_t rep = q_heads / kv_heads;
  const int64_t grain = std::max<int64_t>(1, (1 << 15) / std::max<int64_t>(1, rep * slots * d));
  hot_parallel_for(0, batch * kv_heads, grain, [&](int64_t g0, int64_t g1) {
    thread_local std::vector<float> buffer;
    if (buffer.size() < static_cast<size_t>(rep * slots)) buffer.resize(static_cast<size_t>(rep * slots));
    float* scores = buffer.data();
    for (int64_t bg = g0; bg < g1; ++bg) {
      const int64_t b = bg / kv_heads, g = bg % kv_heads;
      const T* qh = q + (b * q_heads + g * rep) * d;
      matvec_rows(keys.at(b, g), slots, d, qh, rep, scores, slots);  // scores[r][s] = q_r · k_s
      for (int64_t r = 0; r < rep; ++r) {
        float* p = scores + r * slots;
        float top = -std::numeric_limits<float>::infinity();
        for (int64_t s = 0; s < slots; ++s) {
          float x = p[s] * scale;
          if (softcap > 0) x = softcap * std::tanh(x / softcap);
          if (visible != nullptr && !visible[s]) x = -std::numeric_limits<float>::infinity();
          p[s] = x;
          top = std::max(top, x);
        }
        for (int64_t s = 0; s < slots; ++s) p[s] -= top;
        exp_inplace(p, slots);  // exp(−inf) = 0 for masked slots
        float total = 0;
        for (int64_t s = 0; s < slots; ++s) total += p[s];
        const float inv_total = 1.0f / total;
        for (int64_t s = 0; s < slots; ++s) p[s] *= inv_total;
      }
      float* o = out + (b * q_heads + g * rep) * d;  // the rep query heads' outputs, one row each
      std::fill(o, o + rep * d, 0.0f);
      vecmat_rows(values.at(b, g), slots, d, scores, rep, slots, o);
    }
  });
}

template <typename T>
at::Tensor attend_single_query_cpu(const at::Tensor& q, const at::Tensor& keys, const at::Tensor& values,
                                   const at::Tensor& visible, const AttentionOptions& options) {
  const int64_t batch = q.size(0), q_heads = q.size(1), kv_heads = keys.size(1), slots = keys.size(2);
  const int64_t d = q.size(3);
  const at::Tensor qc = q.contiguous();
  const at::Tensor mask = visible.defined() ? visible.contiguous() : at::Tensor();
  at::Tensor out = at::empty({batch, q_heads, 1, d}, q.options().dtype(at::kFloat));
  // keys/values are narrowed views of the cache: each head's S rows of D are contiguous.
  single_query_attention<T>(qc.data_ptr<T>(), {keys.data_ptr<T>(), keys.stride(0), keys.stride(1)},
                            {values.data_ptr<T>(), values.stride(0), values.stride(1)},
                            mask.defined() ? reinterpret_cast<const unsigned char*>(mask.data_ptr<bool>()) : nullptr,
                            batch, q_heads, kv_heads, slots, d,
                            static_cast<float>(detail::attention_scale(options, d)),
                            static_cast<float>(options.softcap), out.data_ptr<float>());
  return in_dtype(out, q.scalar_type());
}

at::Tensor attend_single_query(const at::Tensor& q, const at::Tensor& keys, const at::Tensor& values,
                               const at::Tensor& visible, const AttentionOptions& options) {
  const auto dtype = q.scalar_type();
  const int64_t d = q.size(3);
  const bool cpu_path = q.device().is_cpu() && keys.device().is_cpu() && keys.scalar_type() == dtype &&
                        values.scalar_type() == dtype && keys.stride(3) == 1 && keys.stride(2) == d &&
                        values.stride(3) == 1 && values.stride(2) == d && keys.size(2) > 0;
  if (cpu_path && dtype == at::kFloat) return attend_single_query_cpu<float>(q, keys, values, visible, options);
  if (cpu_path && dtype == at::kBFloat16)
    return attend_single_query_cpu<at::BFloat16>(q, keys, values, visible, options);
  return attend_single_query_aten(q, keys, values, visible, options);
}

void check_cache_inputs(const KVCache& cache, const at::Tensor& q, const at::Tensor& k_new, const at::Tensor& v_new,
                        const AttentionOptions& options) {
  SWARMT_CHECK_INPUT(cache.k.defined() && cache.v.defined() && cache.positions.defined(),
                     "KV cache: not initialised (use make_kv_cache)");
  SWARMT_CHECK_INPUT(q.defined() && k_new.defined() && v_new.defined() && q.dim() == 4 && k_new.dim() == 4 &&
                         k_new.sizes() == v_new.sizes(),
                     "KV cache: q must be (B, Hq, n, D) and k_new, v_new (B, Hkv, n, D)");
  const auto& k = cache.k;
  SWARMT_CHECK_INPUT(k_new.size(0) == k.size(0) && k_new.size(1) == k.size(1) && k_new.size(3) == k.size(3),
                     "KV cache: new keys of shape ", k_new.sizes(), " do not fit the cache (B=", k.size(0),
                     ", Hkv=", k.size(1), ", D=", k.size(3), ")");
  SWARMT_CHECK_INPUT(q.size(0) == k.size(0) && q.size(2) == k_new.size(2) && q.size(3) == k.size(3) &&
                         q.size(1) % k.size(1) == 0 && q.size(2) >= 1,
                     "KV cache: queries of shape ", q.sizes(), " do not fit new keys of shape ", k_new.sizes());
  SWARMT_CHECK_INPUT(q.device() == k.device() && k_new.device() == k.device(),
                     "KV cache: queries, keys and cache must be on one device");
  SWARMT_CHECK_INPUT(cache.capacity == 0 || (options.window >= 1 && options.window <= cache.capacity),
                     "KV cache: a ring of ", cache.capacity, " slots serves windows 1..", cache.capacity, ", got window ",
                     options.window);
}

}  // namespace

int64_t KVCache::bytes() const {
  int64_t total = 0;
  for (const auto* t : {&k, &v, &positions})
    if (t->defined()) total += static_cast<int64_t>(t->numel() * t->element_size());
  return total;
}

int64_t KVCache::bytes_after(int64_t more_tokens) const {
  if (capacity > 0 || !k.defined()) return bytes();
  // One slot: a key and a value of (B, Hkv, D), and its position.
  const int64_t slot = 2 * k.size(0) * k.size(1) * k.size(3) * static_cast<int64_t>(k.element_size()) +
                       static_cast<int64_t>(sizeof(int64_t));
  return slot * grown_slots(k.size(2), seen + more_tokens);
}

KVCache make_kv_cache(int64_t batch, int64_t kv_heads, int64_t head_dim, int64_t capacity, at::ScalarType dtype,
                      at::Device device) {
  SWARMT_CHECK_INPUT(batch >= 1 && kv_heads >= 1 && head_dim >= 1 && capacity >= 0,
                     "KV cache: need batch, kv_heads, head_dim >= 1 and capacity >= 0 (got ", batch, ", ", kv_heads,
                     ", ", head_dim, ", ", capacity, ")");
  SWARMT_CHECK_INPUT(at::isFloatingType(dtype), "KV cache: dtype must be floating point, got ", dtype);
  // A ring is allocated whole when a stream starts: check it against the memory before allocating it.
  const double ring_bytes = static_cast<double>(capacity) *
                            (2.0 * static_cast<double>(batch * kv_heads * head_dim) * c10::elementSize(dtype) + 8.0);
  const int64_t available = available_memory_bytes();
  SWARMT_CHECK_INPUT(available < 0 || ring_bytes <= static_cast<double>(available), "the KV ring of a sliding-window "
                     "layer (", capacity, " slots: the window) needs about ", format_bytes(ring_bytes),
                     " of memory but only ", format_bytes(available), " is available; use a smaller window (--window)");
  KVCache cache;
  cache.capacity = capacity;
  auto options = at::TensorOptions().dtype(dtype).device(device);
  cache.k = at::zeros({batch, kv_heads, capacity, head_dim}, options);  // growing caches start empty
  cache.v = at::zeros({batch, kv_heads, capacity, head_dim}, options);
  cache.positions = at::full({capacity}, -1, options.dtype(at::kLong));
  return cache;
}

template <typename T>
bool attend_token_with_cache(KVCache& cache, const T* q, int64_t q_heads, const T* k_new, const T* v_new,
                             const AttentionOptions& options, float* out) {
  const at::Tensor& k = cache.k;
  if (!k.defined() || !k.device().is_cpu() || k.scalar_type() != c10::CppTypeToScalarType<T>::value ||
      k.size(0) != 1 || !k.is_contiguous() || !cache.v.is_contiguous() || !cache.positions.is_contiguous())
    return false;
  const int64_t kv_heads = k.size(1), d = k.size(3), window = options.window, start = cache.seen;
  if (q_heads % kv_heads != 0 || (cache.capacity > 0 && (window < 1 || window > cache.capacity))) return false;
  int64_t slot = start, first = 0, count = 0;  // the new token's slot; the slots attended: [first, first + count)
  if (cache.capacity == 0) {  // growing cache: slot = position
    reserve_slots(cache, start + 1);
    first = window > 0 ? std::max<int64_t>(0, start - window + 1) : 0;
    count = start + 1 - first;
  } else {  // ring: every filled slot, in slot order
    slot = start % cache.capacity;
    count = std::min(start + 1, cache.capacity);
  }
  const int64_t slots = cache.k.size(2);
  T* kp = cache.k.data_ptr<T>();
  T* vp = cache.v.data_ptr<T>();
  for (int64_t h = 0; h < kv_heads; ++h) {
    std::memcpy(kp + (h * slots + slot) * d, k_new + h * d, static_cast<size_t>(d) * sizeof(T));
    std::memcpy(vp + (h * slots + slot) * d, v_new + h * d, static_cast<size_t>(d) * sizeof(T));
  }
  int64_t* positions = cache.positions.data_ptr<int64_t>();
  positions[slot] = start;
  cache.seen = start + 1;
  const unsigned char* visible = nullptr;  // a ring larger than the window also holds keys it no longer reaches
  thread_local std::vector<unsigned char> flags;
  if (cache.capacity > window && cache.capacity > 0) {
    flags.resize(static_cast<size_t>(count));
    for (int64_t s = 0; s < count; ++s) flags[s] = positions[s] > start - window;
    visible = flags.data();
  }
  single_query_attention<T>(q, {kp + first * d, 0, slots * d}, {vp + first * d, 0, slots * d}, visible, 1, q_heads,
                            kv_heads, count, d, static_cast<float>(detail::attention_scale(options, d)),
                            static_cast<float>(options.softcap), out);
  return true;
}
template bool attend_token_with_cache<float>(KVCache&, const float*, int64_t, const float*, const float*,
                                             const AttentionOptions&, float*);
template bool attend_token_with_cache<at::BFloat16>(KVCache&, const at::BFloat16*, int64_t, const at::BFloat16*,
                                                    const at::BFloat16*, const AttentionOptions&, float*);

at::Tensor attend_with_cache(KVCache& cache, const at::Tensor& q, const at::Tensor& k_new, const at::Tensor& v_new,
                             const AttentionOptions& options) {
  check_cache_inputs(cache, q, k_new, v_new, options);
  detail::check_attention_inputs(q, in_dtype(k_new, q.scalar_type()), in_dtype(v_new, q.scalar_type()), options, {});
  at::NoGradGuard no_grad;
  const int64_t n = q.size(2), start = cache.seen, end = start + n;  // absolute positions of the new tokens
  const int64_t window = options.window;

  if (cache.capacity == 0) {  // growing cache: slot = position, keys already in order
    reserve_slots(cache, end);
    if (n == 1 && write_token_in_place(cache, start, k_new, v_new)) {
      cache.positions.data_ptr<int64_t>()[start] = start;
    } else {
      cache.k.narrow(2, start, n).copy_(k_new);
      cache.v.narrow(2, start, n).copy_(v_new);
      cache.positions.narrow(0, start, n).copy_(at::arange(start, end, cache.positions.options()));
    }
    cache.seen = end;
    // Keys the first new query can reach: [start − window + 1, end) (all of them for full attention).
    const int64_t first = window > 0 ? std::max<int64_t>(0, start - window + 1) : 0;
    auto keys = in_dtype(cache.k.narrow(2, first, end - first), q.scalar_type());
    auto values = in_dtype(cache.v.narrow(2, first, end - first), q.scalar_type());
    if (n == 1) return attend_single_query(q, keys, values, {}, options);
    return detail::blocked_attention_forward(q, keys, values, {}, options).out;
  }

  const int64_t capacity = cache.capacity;
  if (n == 1) {  // decode: write the new key first, then attend over every filled slot in slot order
    if (write_token_in_place(cache, start % capacity, k_new, v_new)) {
      cache.positions.data_ptr<int64_t>()[start % capacity] = start;
    } else {
      ring_write(cache.k, start, k_new);
      ring_write(cache.v, start, v_new);
      ring_write_positions(cache.positions, start, 1);
    }
    cache.seen = end;
    const int64_t filled = std::min(end, capacity);  // slots fill from 0 before the ring wraps
    auto slot_positions = cache.positions.narrow(0, 0, filled);
    at::Tensor visible;  // a ring larger than the window also holds keys the window no longer reaches
    if (capacity > window) visible = slot_positions.gt(start - window);
    return attend_single_query(q, in_dtype(cache.k.narrow(2, 0, filled), q.scalar_type()),
                               in_dtype(cache.v.narrow(2, 0, filled), q.scalar_type()), visible, options);
  }

  // Chunked prefill: the cached keys the chunk's first query can reach (at most window − 1 of them, in
  // position order), then the chunk itself, through the banded kernel with Nk > Nq.
  const int64_t held = std::min({start, capacity, window - 1});
  auto keys = at::cat({ring_read(cache.k, start - held, held).to(q.scalar_type()), k_new.to(q.scalar_type())}, 2);
  auto values = at::cat({ring_read(cache.v, start - held, held).to(q.scalar_type()), v_new.to(q.scalar_type())}, 2);
  auto out = detail::blocked_attention_forward(q, keys, values, {}, options).out;
  const int64_t kept = std::min(n, capacity);  // only the last `capacity` new keys survive
  ring_write(cache.k, end - kept, k_new.narrow(2, n - kept, kept));
  ring_write(cache.v, end - kept, v_new.narrow(2, n - kept, kept));
  ring_write_positions(cache.positions, end - kept, kept);
  cache.seen = end;
  return out;
}

}  // namespace swarmt::ops
