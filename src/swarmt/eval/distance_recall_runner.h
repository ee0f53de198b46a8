// `swarmt eval recall`: associative-recall accuracy as a function of the distance between a fact and
// the question about it (data/synthetic/distance_recall.h). Every probe holds K key-value pairs and asks each key
// again `distance` tokens later; the answer is the model's argmax over the whole vocabulary at the
// repeated key. The filler between them streams through the model's state in chunks, so a distance of
// a million tokens runs in the memory of a few thousand for SWAX and ARMT models.
//
// The control `forget_beyond_window` resets the recurrent layers' states (mLSTM, GDN) `window` tokens
// before the first question: at the questions the model then knows only what its attention window
// and the recurrent layers gathered from that window. Beyond the window it isolates what the
// recurrent memory contributes.
#pragma once

#include <cstdint>
#include <vector>

#include "swarmt/data/synthetic/distance_recall.h"
#include "swarmt/eval/niah_runner.h"
#include "swarmt/eval/report.h"
#include "swarmt/infer/loaded_model.h"

namespace swarmt::eval {

struct RecallRunOptions {
  std::vector<int64_t> distances{16, 64, 256, 1024};
  int64_t pairs = 4;                     // K pairs per probe, each asked once
  int64_t gap = 0;                       // filler tokens after each pair and each question
  int64_t rewrites = 0;                  // rounds restating every key with a new value; the answer is the latest
  bool shuffle_questions = false;        // ask the keys in a random order, not the order stated
  data::RecallProbeDraw draw;            // distinct values; hidden answers
  int64_t samples = 100;                 // probes per distance (samples x pairs questions)
  data::RecallVocabulary vocabulary;
  int64_t batch = 8;                     // probes streamed together
  int64_t chunk = 512;                   // tokens per streaming forward
  bool forget_beyond_window = false;
  uint64_t seed = 42;
  bool quiet = false;
};

// One sample per question: id "recall/<distance>/<probe>/<pair>", variant "recall_k<K>" (with rewrites
// "recall_k<K>_r<R>"), length = the
// distance, score 100 or 0, details {key, value, predicted, probe, pair, query_position, stated (the pair's
// place among the last round of statements), distance (this question's own), key_blind (the chance of an
// answerer that does not bind keys to values, data::key_blind_chances)}. metadata.key_blind_percent: that
// chance's mean per distance, the floor for retrieval by key.
EvalRun run_distance_recall(const infer::LoadedModel& model, const RecallRunOptions& options,
                            std::vector<LengthResources>* resources = nullptr);

}  // namespace swarmt::eval
