// causal_attention (blocked kernel, custom backward) against the plain masked reference, in fp64.
#include <c10/core/CPUAllocator.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <vector>

#include "swarmt/core/error.h"
#include "swarmt/ops/attention.h"
#include "swarmt/ops/attention_band_cpu.h"
#include "ops/kernel_levels.h"
#include "swarmt/ops/flops.h"
#include "test_util.h"

namespace swarmt::ops {
namespace {

struct Qkv {
  at::Tensor q, k, v;
};

Qkv random_qkv(int64_t batch, int64_t query_heads, int64_t kv_heads, int64_t n_queries, int64_t n_keys,
               int64_t head_dim, at::ScalarType dtype = at::kDouble) {
  auto options = at::TensorOptions().dtype(dtype);
  return {at::randn({batch, query_heads, n_queries, head_dim}, options),
          at::randn({batch, kv_heads, n_keys, head_dim}, options),
          at::randn({batch, kv_heads, n_keys, head_dim}, options)};
}

AttentionOptions with(int64_t window, int64_t block_size, double softcap = 0.0) {
  AttentionOptions options;
  options.window = window;
  options.block_size = block_size;
  options.softcap = softcap;
  return options;
}

std::string describe(const AttentionOptions& o, const Qkv& x) {
  return str_cat("q ", x.q.sizes(), " k ", x.k.sizes(), " window ", o.window, " block ", o.block_size, " softcap ",
                 o.softcap);
}

// Gradients of L = Σ out ⊙ upstream with respect to q, k, v.
std::vector<at::Tensor> gradients(const at::Tensor& out, const Qkv& x, const at::Tensor& upstream) {
  return torch::autograd::grad({out}, {x.q, x.k, x.v}, {upstream});
}

Qkv requiring_grad(const Qkv& x) {
  return {x.q.detach().requires_grad_(true), x.k.detach().requires_grad_(true), x.v.detach().requires_grad_(true)};
}

TEST(AttentionTest, blocked_equals_reference_over_lengths_windows_and_heads) {
  const std::vector<std::pair<int64_t, int64_t>> heads = {{1, 1}, {4, 4}, {4, 2}, {6, 1}};
  for (int64_t n : {1, 7, 32, 33, 100}) {
    for (int64_t window : {1, 3, 7, 64, 0}) {
      for (auto [query_heads, kv_heads] : heads) {
        auto x = random_qkv(2, query_heads, kv_heads, n, n, 8);
        auto options = with(window, 16);
        SCOPED_TRACE(describe(options, x));
        EXPECT_TENSORS_CLOSE(causal_attention(x.q, x.k, x.v, options),
                             causal_attention_reference(x.q, x.k, x.v, options), 1e-12);
      }
    }
  }
}

TEST(AttentionTest, any_block_size_gives_the_same_result) {
  auto x = random_qkv(1, 4, 2, 50, 50, 8);
  for (int64_t window : {7, 0}) {
    auto expected = causal_attention_reference(x.q, x.k, x.v, with(window, 1));
    for (int64_t block : {1, 3, 16, 49, 64, 200}) {
      SCOPED_TRACE(describe(with(window, block), x));
      EXPECT_TENSORS_CLOSE(causal_attention(x.q, x.k, x.v, with(window, block)), expected, 1e-12);
    }
  }
}

TEST(AttentionTest, window_larger_than_sequence_is_full_attention) {
  auto x = random_qkv(1, 2, 2, 40, 40, 8);
  EXPECT_TENSORS_CLOSE(causal_attention(x.q, x.k, x.v, with(45, 16)), causal_attention(x.q, x.k, x.v, with(0, 16)),
                       1e-13);
  EXPECT_TENSORS_CLOSE(causal_attention(x.q, x.k, x.v, with(1000, 8)),
                       causal_attention_reference(x.q, x.k, x.v, with(0, 8)), 1e-12);
}

TEST(AttentionTest, window_one_returns_each_positions_own_value) {
  auto x = random_qkv(2, 6, 3, 21, 21, 5);
  // Each query sees only its own key: softmax over one element is 1, so o_i = v_i of its kv head.
  EXPECT_TENSORS_CLOSE(causal_attention(x.q, x.k, x.v, with(1, 8)), x.v.repeat_interleave(2, 1), 1e-14);
}

TEST(AttentionTest, documents_do_not_see_each_other) {
  auto x = random_qkv(2, 4, 2, 45, 45, 8);
  // Row 0: documents of 10, 20 and 15 tokens; row 1: one document.
  auto doc_ids = at::cat({at::full({10}, 0, at::kLong), at::full({20}, 1, at::kLong), at::full({15}, 2, at::kLong)})
                     .unsqueeze(0);
  doc_ids = at::cat({doc_ids, at::zeros({1, 45}, at::kLong)});
  for (int64_t window : {3, 12, 0}) {
    SCOPED_TRACE(describe(with(window, 8), x));
    auto out = causal_attention(x.q, x.k, x.v, with(window, 8), doc_ids);
    EXPECT_TENSORS_CLOSE(out, causal_attention_reference(x.q, x.k, x.v, with(window, 8), doc_ids), 1e-12);
    // Changing document 0's keys and values leaves the outputs of documents 1 and 2 unchanged.
    auto k2 = x.k.clone(), v2 = x.v.clone();
    k2.select(0, 0).narrow(1, 0, 10).normal_();
    v2.select(0, 0).narrow(1, 0, 10).normal_();
    auto out2 = causal_attention(x.q, k2, v2, with(window, 8), doc_ids);
    EXPECT_TENSORS_CLOSE(out2.select(0, 0).narrow(1, 10, 35), out.select(0, 0).narrow(1, 10, 35), 1e-14);
  }
}

TEST(AttentionTest, queries_continue_after_past_keys) {
  // Nq queries over Nk > Nq keys equal the last Nq rows of the Nk-query forward.
  for (int64_t window : {1, 4, 9, 0}) {
    auto full = random_qkv(1, 4, 2, 30, 30, 8);
    auto expected = causal_attention(full.q, full.k, full.v, with(window, 8)).narrow(2, 18, 12);
    auto tail = full.q.narrow(2, 18, 12);
    SCOPED_TRACE(str_cat("window ", window));
    EXPECT_TENSORS_CLOSE(causal_attention(tail, full.k, full.v, with(window, 5)), expected, 1e-12);
    EXPECT_TENSORS_CLOSE(causal_attention_reference(tail, full.k, full.v, with(window, 5)), expected, 1e-12);
    // Decode-shaped call: one query after 29 keys.
    EXPECT_TENSORS_CLOSE(causal_attention(full.q.narrow(2, 29, 1), full.k, full.v, with(window, 64)),
                         expected.narrow(2, 11, 1), 1e-12);
  }
}

TEST(AttentionTest, keys_no_query_reaches_get_zero_gradient) {
  // 6 queries after 20 keys with window 4: the first query (key index 14) reaches back to key 11, so keys
  // 0..10 are in no band; with no queries, none is.
  for (int64_t n_queries : {6, 0}) {
    auto x = requiring_grad(random_qkv(1, 2, 1, n_queries, 20, 4));
    auto out = causal_attention(x.q, x.k, x.v, with(4, 2));
    ASSERT_EQ(out.sizes(), x.q.sizes());
    auto grads = gradients(out, x, at::randn_like(out));
    const int64_t unreached = n_queries == 0 ? 20 : 11;
    EXPECT_TENSORS_CLOSE(grads[1].narrow(2, 0, unreached), at::zeros({1, 1, unreached, 4}, at::kDouble), 0.0);
    EXPECT_TENSORS_CLOSE(grads[2].narrow(2, 0, unreached), at::zeros({1, 1, unreached, 4}, at::kDouble), 0.0);
  }
}

TEST(AttentionTest, softcap_matches_reference) {
  auto x = random_qkv(1, 4, 1, 37, 37, 8);
  x.q.mul_(4.0);  // large scores, so the cap matters
  for (int64_t window : {5, 0}) {
    auto options = with(window, 16, /*softcap=*/2.0);
    SCOPED_TRACE(describe(options, x));
    auto out = causal_attention(x.q, x.k, x.v, options);
    EXPECT_TENSORS_CLOSE(out, causal_attention_reference(x.q, x.k, x.v, options), 1e-12);
    EXPECT_FALSE(at::allclose(out, causal_attention(x.q, x.k, x.v, with(window, 16)), 1e-3, 1e-3));
  }
}

TEST(AttentionTest, explicit_scale_is_used) {
  auto x = random_qkv(1, 2, 2, 20, 20, 8);
  auto options = with(6, 8);
  options.scale = 0.7;
  auto expected = causal_attention_reference(x.q * (0.7 * std::sqrt(8.0)), x.k, x.v, with(6, 8));
  EXPECT_TENSORS_CLOSE(causal_attention(x.q, x.k, x.v, options), expected, 1e-12);
}

TEST(AttentionTest, backward_matches_autograd_through_reference) {
  struct Case {
    int64_t query_heads, kv_heads, n_queries, n_keys, window, block;
    double softcap;
    bool documents;
  };
  const std::vector<Case> cases = {
      {1, 1, 33, 33, 1, 16, 0, false},  {2, 2, 33, 33, 3, 16, 0, false}, {4, 2, 50, 50, 7, 16, 0, false},
      {6, 1, 40, 40, 64, 8, 0, false},  {4, 4, 45, 45, 0, 16, 0, false}, {4, 2, 29, 29, 0, 7, 0, false},
      {4, 2, 12, 30, 5, 4, 0, false},   {2, 1, 10, 25, 0, 3, 0, false},  {4, 2, 40, 40, 9, 8, 3.0, false},
      {4, 2, 40, 40, 6, 8, 0, true},    {2, 2, 20, 35, 0, 8, 2.0, true},
  };
  for (const auto& c : cases) {
    auto x = requiring_grad(random_qkv(2, c.query_heads, c.kv_heads, c.n_queries, c.n_keys, 8));
    auto options = with(c.window, c.block, c.softcap);
    at::Tensor doc_ids;
    if (c.documents) doc_ids = at::arange(c.n_keys, at::kLong).div(7, "floor").unsqueeze(0).repeat({2, 1});
    SCOPED_TRACE(describe(options, x) + (c.documents ? " with documents" : ""));
    auto upstream = at::randn({2, c.query_heads, c.n_queries, 8}, at::kDouble);
    auto blocked = gradients(causal_attention(x.q, x.k, x.v, options, doc_ids), x, upstream);
    auto reference = gradients(causal_attention_reference(x.q, x.k, x.v, options, doc_ids), x, upstream);
    EXPECT_TENSORS_CLOSE(blocked[0], reference[0], 1e-11);
    EXPECT_TENSORS_CLOSE(blocked[1], reference[1], 1e-11);
    EXPECT_TENSORS_CLOSE(blocked[2], reference[2], 1e-11);
  }
}

TEST(AttentionTest, backward_matches_finite_differences) {
  // Tiny GQA case with window, soft-cap and past keys; L = Σ out ⊙ upstream, central differences.
  auto x = requiring_grad(random_qkv(1, 2, 1, 5, 7, 3));
  auto options = with(3, 2, /*softcap=*/1.5);
  auto upstream = at::randn({1, 2, 5, 3}, at::kDouble);
  auto analytic = gradients(causal_attention(x.q, x.k, x.v, options), x, upstream);
  const double h = 1e-6;
  at::NoGradGuard no_grad;
  std::vector<at::Tensor> inputs = {x.q, x.k, x.v};
  for (size_t which = 0; which < inputs.size(); ++which) {
    auto flat = inputs[which].view(-1);
    auto numeric = at::zeros_like(flat);
    for (int64_t i = 0; i < flat.numel(); ++i) {
      const double saved = flat[i].item<double>();
      flat[i] = saved + h;
      const double plus = (causal_attention(x.q, x.k, x.v, options) * upstream).sum().item<double>();
      flat[i] = saved - h;
      const double minus = (causal_attention(x.q, x.k, x.v, options) * upstream).sum().item<double>();
      flat[i] = saved;
      numeric[i] = (plus - minus) / (2 * h);
    }
    SCOPED_TRACE(str_cat("input ", which));
    EXPECT_TENSORS_CLOSE(analytic[which].reshape(-1), numeric, 1e-8);
  }
}

TEST(AttentionTest, bf16_and_fp32_inputs_keep_their_dtype_and_match_reference) {
  auto x64 = random_qkv(1, 4, 2, 70, 70, 16);
  auto upstream = at::randn({1, 4, 70, 16}, at::kDouble);
  auto expected = causal_attention_reference(x64.q, x64.k, x64.v, with(9, 16));
  for (auto [dtype, tolerance] : {std::pair{at::kFloat, 1e-5}, std::pair{at::kBFloat16, 3e-2}}) {
    auto x = requiring_grad({x64.q.to(dtype), x64.k.to(dtype), x64.v.to(dtype)});
    auto out = causal_attention(x.q, x.k, x.v, with(9, 16));
    EXPECT_EQ(out.scalar_type(), dtype);
    EXPECT_TENSORS_CLOSE(out, expected, tolerance);
    auto grads = gradients(out, x, upstream.to(dtype));
    EXPECT_EQ(grads[1].scalar_type(), dtype);
    auto x_ref = requiring_grad({x.q.detach().to(at::kDouble), x.k.detach().to(at::kDouble),
                                 x.v.detach().to(at::kDouble)});
    auto reference = gradients(causal_attention_reference(x_ref.q, x_ref.k, x_ref.v, with(9, 16)), x_ref,
                               upstream.to(dtype).to(at::kDouble));
    for (int i = 0; i < 3; ++i) EXPECT_TENSORS_CLOSE(grads[i], reference[i], 10 * tolerance);
  }
}

TEST(AttentionTest, parallel_head_ranges_give_the_same_result_as_one_thread) {
  // The CPU kernel splits the (batch, kv head) rows across threads; documents make the mask per row.
  auto x = requiring_grad(random_qkv(3, 6, 3, 40, 40, 8));
  auto doc_ids = at::randint(0, 3, {3, 40}, at::kLong).cumsum(1);  // non-decreasing: documents of random lengths
  auto upstream = at::randn({3, 6, 40, 8}, at::kDouble);
  const int threads = at::get_num_threads();
  auto run = [&](int n_threads) {
    at::set_num_threads(n_threads);
    auto out = causal_attention(x.q, x.k, x.v, with(5, 8), doc_ids);
    auto grads = gradients(out, x, upstream);
    return std::vector<at::Tensor>{out, grads[0], grads[1], grads[2]};
  };
  auto serial = run(1);
  auto parallel = run(4);
  at::set_num_threads(threads);
  for (size_t i = 0; i < serial.size(); ++i) EXPECT_TENSORS_CLOSE(parallel[i], serial[i], 1e-13);
  EXPECT_TENSORS_CLOSE(serial[0], causal_attention_reference(x.q, x.k, x.v, with(5, 8), doc_ids), 1e-12);
}

TEST(AttentionTest, parallel_query_blocks_give_the_same_result_as_one_thread) {
  // One (batch, kv head) row: the forward splits its query blocks across threads instead.
  auto x = random_qkv(1, 4, 1, 70, 70, 8);
  const int threads = at::get_num_threads();
  at::set_num_threads(4);
  auto parallel = causal_attention(x.q, x.k, x.v, with(9, 8));
  at::set_num_threads(threads);
  EXPECT_TENSORS_CLOSE(parallel, causal_attention_reference(x.q, x.k, x.v, with(9, 8)), 1e-12);
}

// The CPU's raw-buffer kernels (attention_band_cpu.h) against the batched-op path they replace, on
// everything the mask can depend on: windows, GQA, past keys, documents, soft-capping, fp32 and fp64.
TEST(AttentionTest, band_kernels_equal_the_batched_ops_forward_and_backward) {
  struct Case {
    int64_t query_heads, kv_heads, n_queries, n_keys, window, block;
    double softcap;
    bool documents;
  };
  // The last case's 1024 keys make the transposed keys' rows 4 KiB apart, which the kernel pads.
  const std::vector<Case> cases = {{4, 4, 70, 70, 16, 8, 0.0, false}, {6, 2, 33, 33, 0, 16, 0.0, true},
                                   {4, 1, 20, 45, 7, 8, 0.0, false},  {2, 2, 50, 50, 9, 16, 5.0, true},
                                   {1, 1, 1, 1, 1, 64, 0.0, false},   {2, 1, 1024, 1024, 100, 64, 0.0, false}};
  for (auto dtype : {at::kDouble, at::kFloat}) {
    for (const Case& c : cases) {
      auto x = requiring_grad(random_qkv(2, c.query_heads, c.kv_heads, c.n_queries, c.n_keys, 8, dtype));
      auto options = with(c.window, c.block, c.softcap);
      at::Tensor doc_ids;
      if (c.documents) doc_ids = at::randint(0, 3, {2, c.n_keys}, at::kLong).cumsum(1);
      auto upstream = at::randn({2, c.query_heads, c.n_queries, 8}, at::TensorOptions().dtype(dtype));
      auto run = [&](bool band) {
        detail::set_attention_band_kernels(band);
        EXPECT_EQ(detail::attention_band_kernels(), band);
        auto out = causal_attention(x.q, x.k, x.v, options, doc_ids);
        auto grads = gradients(out, x, upstream);
        detail::set_attention_band_kernels(true);
        return std::vector<at::Tensor>{out, grads[0], grads[1], grads[2]};
      };
      ASSERT_TRUE(detail::attention_band_kernels()) << "no BLAS GEMM found: the band kernels would not run";
      SCOPED_TRACE(str_cat(describe(options, x), " documents ", c.documents, " ", dtype));
      auto batched = run(false);
      for_each_kernel_level([&] {  // fp32: the small-GEMM kernel with AVX-512, BLAS below it
        auto band = run(true);
        const double tolerance = dtype == at::kDouble ? 1e-12 : 2e-5;
        for (size_t i = 0; i < band.size(); ++i) EXPECT_TENSORS_CLOSE(band[i], batched[i], tolerance);
      });
    }
  }
}

TEST(AttentionTest, bad_inputs_are_rejected_with_input_errors) {
  auto x = random_qkv(1, 4, 2, 8, 8, 4);
  auto expect_input_error = [](const std::function<void()>& call) {
    try {
      call();
      ADD_FAILURE() << "no error thrown";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::BadInput) << e.what();
    }
  };
  expect_input_error([&] { causal_attention(x.q, x.k.narrow(1, 0, 1).repeat({1, 3, 1, 1}), x.v, with(0, 4)); });
  expect_input_error([&] { causal_attention(x.q, x.k.narrow(2, 0, 4), x.v.narrow(2, 0, 4), with(0, 4)); });
  expect_input_error([&] { causal_attention(x.q, x.k, x.v.narrow(3, 0, 2), with(0, 4)); });
  expect_input_error([&] { causal_attention(x.q, x.k, x.v, with(-1, 4)); });
  expect_input_error([&] { causal_attention(x.q, x.k, x.v, with(0, 0)); });
  expect_input_error([&] { causal_attention(x.q, x.k.to(at::kFloat), x.v, with(0, 4)); });
  expect_input_error([&] { causal_attention(x.q, x.k, x.v, with(0, 4), at::zeros({1, 7}, at::kLong)); });
  expect_input_error([&] { causal_attention(x.q.squeeze(0), x.k, x.v, with(0, 4)); });
}

// Live and peak bytes of CPU tensors, counted by wrapping libtorch's CPU allocator.
class TrackingAllocator : public c10::Allocator {
 public:
  c10::DataPtr allocate(size_t bytes) const {
    auto* record = new Record{inner_->allocate(bytes), bytes};
    const int64_t now = live_ += static_cast<int64_t>(bytes);
    int64_t peak = peak_.load();
    while (now > peak && !peak_.compare_exchange_weak(peak, now)) {
    }
    return {record->inner.get(), record, &release, record->inner.device()};
  }
  c10::DataPtr allocate(size_t bytes) { return static_cast<const TrackingAllocator*>(this)->allocate(bytes); }
  void copy_data(void* dest, const void* src, std::size_t count) const { std::memcpy(dest, src, count); }

  void install() {
    inner_ = c10::GetCPUAllocator();
    c10::SetCPUAllocator(this);
  }
  void uninstall() { c10::SetCPUAllocator(inner_); }
  void reset_peak() { peak_ = live_.load(); }
  int64_t live() const { return live_; }
  int64_t peak() const { return peak_; }

 private:
  struct Record {
    c10::DataPtr inner;
    size_t bytes;
  };
  static void release(void* context) {
    auto* record = static_cast<Record*>(context);
    live_ -= static_cast<int64_t>(record->bytes);
    delete record;
  }
  c10::Allocator* inner_ = nullptr;
  static inline std::atomic<int64_t> live_{0};
  static inline std::atomic<int64_t> peak_{0};
};

TrackingAllocator& tracking_allocator() {
  static TrackingAllocator allocator;  // outlives every tensor it allocated
  return allocator;
}

struct MemoryUse {
  int64_t saved_for_backward;  // bytes that stay alive between forward and backward
  int64_t peak_above_inputs;   // peak bytes of forward + backward beyond the inputs
};

MemoryUse measure_forward_backward(int64_t n, int64_t window, bool reference) {
  auto x = requiring_grad(random_qkv(1, 2, 2, n, n, 16, at::kFloat));
  auto upstream = at::randn({1, 2, n, 16});
  auto& tracker = tracking_allocator();
  tracker.install();
  tracker.reset_peak();
  const int64_t before = tracker.live();
  MemoryUse use{};
  {
    auto out = reference ? causal_attention_reference(x.q, x.k, x.v, with(window, 32))
                         : causal_attention(x.q, x.k, x.v, with(window, 32));
    use.saved_for_backward = tracker.live() - before;
    auto grads = gradients(out, x, upstream);
  }
  use.peak_above_inputs = tracker.peak() - before;
  tracker.uninstall();
  return use;
}

TEST(AttentionTest, forward_backward_memory_grows_linearly_not_quadratically) {
  const int64_t n = 1024;
  const int64_t one_score_matrix = n * n * 4;  // bytes of one fp32 N×N matrix of one head
  for (int64_t window : {0, 64}) {
    SCOPED_TRACE(str_cat("window ", window));
    auto small = measure_forward_backward(n, window, false);
    auto large = measure_forward_backward(2 * n, window, false);
    // Saved: the output and the per-row log-sum-exp (plus bookkeeping), O(N·D).
    EXPECT_LE(large.saved_for_backward, 2 * 2 * n * (16 + 1) * 4 + 4096);
    // Peak: O(N·D + block·keys) per head. Doubling N at most doubles it, and it stays far below N².
    EXPECT_LT(large.peak_above_inputs, 2.3 * small.peak_above_inputs);
    EXPECT_LT(large.peak_above_inputs, one_score_matrix);
  }
  // The yardstick measures what it should: the reference materialises N×N scores per head.
  EXPECT_GT(measure_forward_backward(n, 0, true).peak_above_inputs, 2 * one_score_matrix);
}

TEST(AttentionFlopsTest, visible_pairs_match_a_brute_force_count) {
  for (int64_t n_keys : {1, 5, 17}) {
    for (int64_t n_queries = 1; n_queries <= n_keys; n_queries += 3) {
      for (int64_t window : {0, 1, 4, 16, 40}) {
        int64_t count = 0;
        for (int64_t i = 0; i < n_queries; ++i)
          for (int64_t j = 0; j < n_keys; ++j) {
            const int64_t distance = i + n_keys - n_queries - j;
            count += distance >= 0 && (window == 0 || distance < window);
          }
        EXPECT_EQ(attention_visible_pairs(n_queries, n_keys, window), count)
            << n_queries << " queries, " << n_keys << " keys, window " << window;
      }
    }
  }
}

TEST(AttentionFlopsTest, formulas_match_the_documented_closed_forms) {
  // SWA: 4·D·(w·N − w(w−1)/2) per head; full causal: 4·D·N(N+1)/2 ≈ 2·N²·D.
  EXPECT_DOUBLE_EQ(attention_forward_flops(1, 8, 4096, 4096, 64, 128), 8 * 4.0 * 64 * (128.0 * 4096 - 128 * 127 / 2));
  EXPECT_DOUBLE_EQ(attention_forward_flops(2, 1, 100, 100, 32, 0), 2 * 4.0 * 32 * (100 * 101 / 2));
  EXPECT_DOUBLE_EQ(attention_backward_flops(2, 1, 100, 100, 32, 0), 2 * attention_forward_flops(2, 1, 100, 100, 32, 0));
  EXPECT_DOUBLE_EQ(attention_forward_flops(1, 1, 1, 1000, 64, 128), 4.0 * 64 * 128);  // one decode step
}

}  // namespace
}  // namespace swarmt::ops
