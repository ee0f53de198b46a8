#include "swarmt/eval/armt_lookup.h"

#include <algorithm>

#include "swarmt/core/error.h"
#include "swarmt/nn/linear.h"

namespace swarmt::eval {

namespace {

// One pass of the base over a segment, as ArmtModel::segment_pass runs it, recording into `trace` the read
// features of the real tokens (when `record_reads`) and the writes (when `write`).
at::Tensor traced_pass(models::ArmtModel& model, const at::Tensor& x, std::vector<ops::AssocMemoryState>& memories,
                       bool write, bool record_reads, std::vector<MemoryLayerTrace>& trace,
                       std::vector<at::Tensor>& reads) {
  const int64_t n = x.size(1), mem = model.config().num_memory_tokens;
  at::Tensor h = write ? at::cat({x, model.memory_tokens().to(x.scalar_type()).unsqueeze(0).expand({1, mem, x.size(2)})}, 1)
                       : x;
  nn::LayerContext ctx;
  ctx.positions = models::make_positions(h.size(1), 0);
  at::Tensor out;
  const auto run = [&ctx, &out](nn::DecoderLayer& layer, const at::Tensor& in) {
    out = layer.forward(in, ctx);
    return out;
  };
  const auto dtype = model.memory_dtype();
  for (int64_t i = 0, slot = 0; i < model.num_layers(); ++i) {
    const auto& layers = model.memory_layers();
    const bool wrapped = std::find(layers.begin(), layers.end(), i) != layers.end();
    if (!wrapped) {
      h = model.layer_with_memory(i, h, run, memories, nullptr, n);
      continue;
    }
    auto& memory = model.memory_layer(static_cast<size_t>(slot));
    if (record_reads)  // the query a real token reads with: its input to the layer (memory.read's q)
      reads[static_cast<size_t>(slot)] = memory->features(nn::linear(memory->query, h.narrow(1, 0, n)), dtype).squeeze(0);
    std::vector<ops::AssocMemoryState> next = memories;
    h = model.layer_with_memory(i, h, run, memories, write ? &next : nullptr, n);
    if (write) {
      at::Tensor m = out.narrow(1, n, mem);
      auto& layer = trace[static_cast<size_t>(slot)];
      layer.write_keys.push_back(memory->features(nn::linear(memory->key, m), dtype).squeeze(0));
      layer.write_betas.push_back(at::sigmoid(nn::linear(memory->beta, m).to(dtype)).squeeze(0).transpose(0, 1));
      memories[static_cast<size_t>(slot)] = next[static_cast<size_t>(slot)];
    }
    ++slot;
  }
  return write ? h.narrow(1, 0, n) : h;
}

double cosine(const at::Tensor& a, const at::Tensor& b) {
  return (a * b).sum().item<double>() / std::max(a.norm().item<double>() * b.norm().item<double>(), 1e-30);
}

}  // namespace

ArmtTrace trace_armt(models::ArmtModel& model, const at::Tensor& tokens) {
  SWARMT_CHECK(tokens.dim() == 2 && tokens.size(0) == 1, "trace_armt: tokens must be (1, N)");
  at::NoGradGuard no_grad;
  const int64_t length = tokens.size(1), seg = model.config().segment_size;
  const size_t wrapped = model.memory_layers().size();
  ArmtTrace trace;
  trace.layers.resize(wrapped);
  std::vector<std::vector<at::Tensor>> reads_per_segment;
  for (size_t slot = 0; slot < wrapped; ++slot) trace.layers[slot].layer = model.memory_layers()[slot];
  auto memories = model.zero_memories(1);
  std::vector<at::Tensor> outputs;
  const at::Tensor on_device = tokens.to(model.device());
  for (int64_t begin = 0; begin < length; begin += seg) {
    const int64_t n = std::min(seg, length - begin);
    const bool write = begin + n < length;
    at::Tensor x = model.embed(on_device.narrow(1, begin, n));
    std::vector<at::Tensor> reads(wrapped);
    if (write && model.config().separate_write_pass) {
      outputs.push_back(traced_pass(model, x, memories, /*write=*/false, /*record_reads=*/true, trace.layers, reads));
      traced_pass(model, x, memories, /*write=*/true, /*record_reads=*/false, trace.layers, reads);
    } else {
      outputs.push_back(traced_pass(model, x, memories, write, /*record_reads=*/true, trace.layers, reads));
    }
    reads_per_segment.push_back(std::move(reads));
  }
  trace.hidden = at::cat(outputs, 1);
  for (size_t slot = 0; slot < wrapped; ++slot) {
    std::vector<at::Tensor> parts;
    for (const auto& reads : reads_per_segment) parts.push_back(reads[slot]);
    trace.layers[slot].read_features = at::cat(parts, 1);
  }
  return trace;
}

void LookupAccumulator::add(const ArmtTrace& trace, const data::RecallProbe& probe) {
  const int64_t K = probe.num_pairs();
  SWARMT_CHECK_INPUT(K >= 2, "memory lookup: a probe needs at least two pairs (got ", K, ")");
  if (sums_.empty()) {
    fact_keys_.resize(trace.layers.size());
    sums_.resize(trace.layers.size());
    for (size_t s = 0; s < sums_.size(); ++s) sums_[s].layer = trace.layers[s].layer;
  }
  SWARMT_CHECK(sums_.size() == trace.layers.size(), "memory lookup: traces of different models");
  for (size_t s = 0; s < trace.layers.size(); ++s) {
    const auto& layer = trace.layers[s];
    auto& sum = sums_[s];
    const auto written = static_cast<int64_t>(layer.write_keys.size());
    std::vector<int64_t> fact_segment(static_cast<size_t>(K));
    for (int64_t j = 0; j < K; ++j) {
      fact_segment[static_cast<size_t>(j)] = (probe.pair_position(j) + 1) / segment_size_;
      SWARMT_CHECK_INPUT(fact_segment[static_cast<size_t>(j)] < written, "memory lookup: fact ", j,
                         " lies in a segment that writes nothing (the input's last)");
    }
    for (int64_t j = 0; j < K; ++j) {
      const at::Tensor& k = layer.write_keys[static_cast<size_t>(fact_segment[static_cast<size_t>(j)])];
      fact_keys_[s].push_back(k / k.norm(2, -1, /*keepdim=*/true).clamp_min(1e-30));
    }
    std::vector<at::Tensor> queries;
    for (int64_t i = 0; i < K; ++i) queries.push_back(layer.read_features.select(1, probe.query_position(i)));  // (H, Dk)
    for (int64_t i = 0; i < K; ++i) {
      std::vector<double> match;
      for (int64_t j = 0; j < K; ++j) {
        const auto seg = static_cast<size_t>(fact_segment[static_cast<size_t>(j)]);
        match.push_back((at::einsum("hd,hmd->hm", {queries[static_cast<size_t>(i)], layer.write_keys[seg]}) *
                         layer.write_betas[seg])
                            .sum()
                            .item<double>());
      }
      bool hit = true;
      for (int64_t j = 0; j < K; ++j) {
        if (j == i) continue;
        hit = hit && match[static_cast<size_t>(i)] > match[static_cast<size_t>(j)];
        sum.other += match[static_cast<size_t>(j)];
        ++sum.other_n;
      }
      sum.own += match[static_cast<size_t>(i)];
      ++sum.own_n;
      sum.hits += hit ? 1 : 0;
      ++sum.questions;
      for (int64_t j = i + 1; j < K; ++j) {
        const at::Tensor& a = queries[static_cast<size_t>(i)];
        const at::Tensor& b = queries[static_cast<size_t>(j)];
        for (int64_t h = 0; h < a.size(0); ++h) {
          sum.query_cosine += cosine(a[h], b[h]);
          ++sum.query_pairs;
        }
      }
    }
    for (int64_t seg = 0; seg < written; ++seg) {
      const double beta = layer.write_betas[static_cast<size_t>(seg)].mean().item<double>();
      if (std::find(fact_segment.begin(), fact_segment.end(), seg) != fact_segment.end()) {
        sum.beta_fact += beta;
        ++sum.fact_n;
      } else {
        sum.beta_other += beta;
        ++sum.other_beta_n;
      }
    }
  }
  for (int64_t j = 0; j < K; ++j) fact_key_ids_.push_back(probe.keys[static_cast<size_t>(j)]);
}

std::vector<LookupLayerStats> LookupAccumulator::stats() const {
  const auto mean = [](double total, int64_t n) { return n > 0 ? total / static_cast<double>(n) : 0.0; };
  std::vector<LookupLayerStats> out;
  for (const auto& s : sums_) {
    LookupLayerStats r;
    r.layer = s.layer;
    r.hits = s.hits;
    r.questions = s.questions;
    r.query_cosine = mean(s.query_cosine, s.query_pairs);
    r.own_match = mean(s.own, s.own_n);
    r.other_match = mean(s.other, s.other_n);
    r.beta_fact = mean(s.beta_fact, s.fact_n);
    r.beta_other = mean(s.beta_other, s.other_beta_n);
    const auto& keys = fact_keys_[out.size()];
    if (keys.size() >= 2) {
      // cos[a][b]: mean over memory tokens and heads of the cosine between the keys of facts a and b.
      const at::Tensor all = at::stack(keys).flatten(1, 2);  // (F, H·M, Dk/H)
      const at::Tensor cos = at::einsum("atd,btd->ab", {all, all}) / static_cast<double>(all.size(1));
      const at::Tensor ids = at::tensor(fact_key_ids_, at::kLong);
      const at::Tensor same = ids.unsqueeze(0).eq(ids.unsqueeze(1)).logical_and(
          at::eye(ids.size(0), at::kBool).logical_not());
      const at::Tensor different = ids.unsqueeze(0).ne(ids.unsqueeze(1));
      const auto masked_mean = [&cos](const at::Tensor& mask) {
        const double n = mask.sum().item<double>();
        return n > 0 ? cos.masked_select(mask).sum().item<double>() / n : 0.0;
      };
      r.key_cosine_same = masked_mean(same);
      r.key_cosine_different = masked_mean(different);
    }
    out.push_back(r);
  }
  return out;
}

Json LookupLayerStats::to_json() const {
  return Json{{"layer", layer},         {"hits", hits},           {"questions", questions},
              {"query_cosine", query_cosine}, {"own_match", own_match}, {"other_match", other_match},
              {"beta_fact", beta_fact}, {"beta_other", beta_other}, {"key_cosine_same", key_cosine_same},
              {"key_cosine_different", key_cosine_different}};
}

}  // namespace swarmt::eval
