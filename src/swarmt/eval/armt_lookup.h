// Does an ARMT memory look facts up by key? On recall probes (data/synthetic/distance_recall.h), each
// memory layer's reads are compared with its writes: a question about fact i should read, from the
// associative memory A = Σ β k vᵀ, mostly what fact i's segment wrote. With φ the layer's feature map,
//   match(i, j) = Σ_heads Σ_memory tokens  β_j · φ(q_i)ᵀ φ(k_j)
// where q_i is the read query at question i and k_j, β_j are the keys and strengths written by the segment
// that holds fact j. Per layer the report gives
//   lookup        the share of questions whose own fact has the largest match (chance 1/K for K facts; a
//                 memory whose reads do not depend on the query scores exactly 1/K: every question picks
//                 the same write),
//   query cosine  the mean cosine between the read features of two different questions (per head): near 1,
//                 every position reads the same mixture of the writes whatever key it asks,
//   own / other   the mean match of a question with its own fact against that with the other facts,
//   β             the mean write strength of the fact segments and of the other written segments,
//   key cosine    the mean cosine between the keys two fact segments write (memory token by memory token,
//                 head by head), over pairs of facts with the same key (from different probes) and with
//                 different keys: a write that carries its fact's key has the first well above the second,
//                 and only then can a query select it.
// The match measures which writes a read selects, not what the delta rule left of them (later writes
// move what earlier keys read back), and ignores a read gate, which scales a position's read as a whole.
#pragma once

#include <cstdint>
#include <vector>

#include <ATen/ATen.h>

#include "swarmt/core/json.h"
#include "swarmt/data/synthetic/distance_recall.h"
#include "swarmt/models/armt_model.h"

namespace swarmt::eval {

// What one memory layer read and wrote over one input (batch 1).
struct MemoryLayerTrace {
  int64_t layer = 0;
  at::Tensor read_features;            // (H, N, Dk/H): φ(W_q h_t) of the N real positions
  std::vector<at::Tensor> write_keys;  // per written segment s: (H, M, Dk/H), φ(W_k m) of its memory tokens
  std::vector<at::Tensor> write_betas; // per written segment s: (H, M)
};

struct ArmtTrace {
  at::Tensor hidden;  // (1, N, d): the model's final hidden states, as forward_hidden gives them
  std::vector<MemoryLayerTrace> layers;  // one per memory layer
};

// Runs the model over `tokens` (1, N) segment by segment as its forward does (every segment but the last
// writes; with a separate write pass the write comes from the second pass) and records every memory
// layer's reads and writes. No gradients.
ArmtTrace trace_armt(models::ArmtModel& model, const at::Tensor& tokens);

struct LookupLayerStats {
  int64_t layer = 0;
  int64_t hits = 0, questions = 0;  // questions whose own fact has the largest match
  double query_cosine = 0;          // mean over pairs of questions of the same probe, and over heads
  double own_match = 0, other_match = 0;
  double beta_fact = 0, beta_other = 0;
  double key_cosine_same = 0, key_cosine_different = 0;  // 0 when no pair of facts has the same key
  Json to_json() const;
};

// Sums the statistics over probes. A probe's fact j is the write of the segment holding its statement's
// value (without rewrites: the pair itself); probes need at least two pairs.
class LookupAccumulator {
 public:
  explicit LookupAccumulator(int64_t segment_size) : segment_size_(segment_size) {}
  void add(const ArmtTrace& trace, const data::RecallProbe& probe);
  std::vector<LookupLayerStats> stats() const;

 private:
  struct Sums {
    int64_t layer = 0, hits = 0, questions = 0, query_pairs = 0, own_n = 0, other_n = 0, fact_n = 0, other_beta_n = 0;
    double query_cosine = 0, own = 0, other = 0, beta_fact = 0, beta_other = 0;
  };
  int64_t segment_size_;
  std::vector<Sums> sums_;
  // Per layer, the written keys of every fact segment seen (H, M, Dk/H), unit per memory token and head,
  // and the key id stated there.
  std::vector<std::vector<at::Tensor>> fact_keys_;
  std::vector<int64_t> fact_key_ids_;
};

}  // namespace swarmt::eval
