// Distance-controlled associative recall: the task that measures whether a model remembers a fact
// after it has left the attention window (SWAX's central claim, specs/experiments.md).
//
// Ids come from three disjoint ranges, so filler never looks like a key:
//   keys    [key_begin, key_end)        values [value_begin, value_end)     filler [filler_begin, filler_end)
// A sequence holds K pairs "key value" (keys distinct within the sequence). Each key is asked again
// d tokens after its pair ("key value ... d tokens later ... key value"); the model is scored, and
// trained, only at the repeated key, whose next-token target is the value. Everything else is filler.
// A key may be asked several times (queries_per_pair): each question then comes d tokens after the
// key's previous occurrence, so d is always the distance over which the value must be remembered.
//
// Rewrites (the associative retrieval with rewrites of ARMT 2024): a key may be stated again with a new
// value before it is asked ("k v1 ... k v2 ... k ?" -> v2). A restatement cannot be predicted, so it is
// not scored; every question's answer is the key's latest value, and d counts from that statement.
//
// Training sequences place the pairs at random positions with d drawn from a mixture of uniform bands
// (e.g. 90 % inside the long attention window, 10 % between the long window and the training length).
// The "probe" layout instead trains on the evaluation probes' layout (the associative retrieval of ARMT
// 2024): the K pairs one after another, `gap` filler tokens after each (gap = T - 2 puts every pair in its
// own segment of an ARMT model with segment T), then every key asked once, by default in a random order
// (in the order stated, a memory that answers its oldest unasked fact would need no key).
// Evaluation probes put K pairs after a short filler lead-in and ask every key at the same distance d,
// so accuracy is measured as a function of d alone; their tokens are a pure function of (probe, position),
// which lets an evaluation stream a million filler tokens without materialising them.
//
// In the byte tokenizer's id space the defaults are keys 1-64, values 65-128, filler 129-255.
#pragma once

#include <cstdint>
#include <vector>

#include "swarmt/core/json.h"

namespace swarmt::data {

struct RecallVocabulary {
  int64_t key_begin = 1, key_end = 65;
  int64_t value_begin = 65, value_end = 129;
  int64_t filler_begin = 129, filler_end = 256;

  int64_t num_keys() const { return key_end - key_begin; }
  int64_t num_values() const { return value_end - value_begin; }
  bool is_key(int64_t id) const { return id >= key_begin && id < key_end; }
  bool is_value(int64_t id) const { return id >= value_begin && id < value_end; }
  bool is_filler(int64_t id) const { return id >= filler_begin && id < filler_end; }
};

// d ~ U[min, max] (inclusive) with probability weight / (sum of weights).
struct DistanceBand {
  double weight = 1.0;
  int64_t min = 0, max = 0;
};

// From `from` (a fraction of training in [0, 1)) on, sequences hold `pairs` pairs.
struct PairsStage {
  double from = 0.0;
  int64_t pairs = 1;
};

// How a probe (or a probe-layout training sequence) draws its values and writes its questions beyond the
// defaults (values drawn with replacement, each question followed by its answer). Each closes a way of
// answering without binding keys to values: with repeated values the most frequent stated value is right
// more often than one time in K; with the answers in the text, those already given rule their values out for
// the later questions (the last question's answer is the one value left). key_blind_chances() gives what
// such an answerer scores on a probe; with both set, 1/K for every question.
struct RecallProbeDraw {
  bool distinct_values = false;  // no two keys hold the same value in a round (needs K + rewrites <= values)
  bool hidden_answers = false;   // a filler token follows each question where its answer would be (the
                                 // answer is still the target at the question)
};

// Where a training sequence puts its pairs: anywhere (each question d after its key's previous
// occurrence), or as an evaluation probe does (pairs in a row `gap` tokens apart, then the questions).
enum class RecallLayout { kRandom, kProbe };

struct RecallTrainingConfig {
  RecallVocabulary vocabulary;
  RecallLayout layout = RecallLayout::kRandom;
  int64_t gap = 0;  // probe layout: filler tokens after each pair (and after each question)
  bool shuffle_questions = true;  // probe layout: ask the keys in a random order, not the order stated
  RecallProbeDraw draw;           // probe layout: distinct values, hidden answers
  std::vector<DistanceBand> distances{{0.9, 10, 60}, {0.1, 65, 200}};
  std::vector<PairsStage> pairs_schedule{{0.0, 2}, {0.15, 4}, {0.3, 8}};
  int64_t queries_per_pair = 1;  // times each key is asked again, each at its own distance from the
                                 // previous occurrence (questions that do not fit the sequence are dropped)
  int64_t rewrites = 0;          // each key is restated with a new value U{0..rewrites} times before its
                                 // first question (so how often a key occurs does not tell which is asked)

  // The number of pairs at a point of training; `progress` < 0 (unknown, e.g. validation data) gives
  // the last stage.
  int64_t pairs_at(double progress) const;
  int64_t max_distance() const;
};

// One asked key.
struct RecallQuery {
  int64_t position = 0;           // input position of the repeated key (its target is the value)
  int64_t previous_position = 0;  // the key's previous occurrence: its pair, or its previous question
  int64_t distance = 0;           // position - previous_position
  int64_t key = 0, value = 0;     // value: the key's latest value before the question
  int64_t statements = 1;         // times the key was stated (1 + its rewrites) before the question
};

struct RecallSequence {
  std::vector<int64_t> tokens;     // length N + 1: inputs are tokens[0, N), targets tokens[1, N]
  std::vector<int64_t> targets;    // length N: the value at query positions, kIgnoreIndex elsewhere
  std::vector<RecallQuery> queries;  // in position order
};

// Validates a training config against the sequence length (names `where` and the field on error):
// disjoint non-empty ranges, enough distinct keys for the largest K, bands inside [1, N - 2], and room
// for K pairs with their queries.
void validate_recall_training_config(const RecallTrainingConfig& config, int64_t sequence_length,
                                     const std::string& where);

// A training sequence of `sequence_length` inputs with `num_pairs` pairs; deterministic in `seed`.
RecallSequence generate_recall_sequence(const RecallTrainingConfig& config, int64_t sequence_length,
                                        int64_t num_pairs, uint64_t seed);

// Reads {"pairs": [[0, 2], [0.15, 4], [0.3, 8]] | 8, "distances": [[0.9, 10, 60], [0.1, 65, 200]],
//        "queries_per_pair": 1, "rewrites": 0, "keys": [1, 65], "values": [65, 129], "filler": [129, 256],
//        "layout": "random" | "probe", "gap": 0, "shuffle_questions": true, "distinct_values": false,
//        "hidden_answers": false}
// (absent fields keep their defaults). `vocab_size` bounds the ranges.
RecallTrainingConfig recall_training_config_from_json(const JsonView& view, int64_t vocab_size);
Json recall_training_config_to_json(const RecallTrainingConfig& config);

// ---------------------------------------------------------------------------------------------------
// Evaluation probes

struct RecallProbe {
  RecallVocabulary vocabulary;
  std::vector<int64_t> keys, values;  // the K asked pairs in question order; values are the latest
  // With rewrites, every key is stated in R + 1 rounds, each round in its own order and with a value the
  // key has not held before; `keys`/`values` are the last round. Without, the statements are the pairs.
  std::vector<int64_t> statement_keys, statement_values;
  // For asked pair i, its place in the last round of statements. Empty: the keys are asked in the order
  // they were stated (then a memory that answers its oldest unasked fact needs no key at all); shuffled
  // questions ask them in another order.
  std::vector<int64_t> asked_from;
  bool answers_hidden = false;        // filler, not the value, after each question
  int64_t lead_in = 8;                // filler tokens before the first statement
  int64_t gap = 0;                    // filler tokens after each statement (and so after each question)
  int64_t distance = 16;              // the first question comes `distance` tokens after the last round's first
                                      // statement; in stated order every key is asked `distance` after its latest
                                      // statement, shuffled each within (K - 1)(2 + gap) of it (their mean)
  uint64_t filler_seed = 0;

  int64_t num_pairs() const { return static_cast<int64_t>(keys.size()); }
  // The latest value of every stated key (the last round of statements, in its order).
  std::vector<int64_t> values_in_last_round() const {
    return {statement_values.end() - num_pairs(), statement_values.end()};
  }
  int64_t rewrites() const { return static_cast<int64_t>(statement_keys.size()) / num_pairs() - 1; }
  int64_t statement_position(int64_t j) const { return lead_in + (2 + gap) * j; }
  // Where asked pair i was last stated, where it is asked, and how far apart the two are.
  int64_t pair_position(int64_t i) const {
    const int64_t place = asked_from.empty() ? i : asked_from[static_cast<size_t>(i)];
    return statement_position(num_pairs() * rewrites() + place);
  }
  int64_t query_position(int64_t i) const {
    return statement_position(num_pairs() * rewrites()) + distance + (2 + gap) * i;
  }
  int64_t question_distance(int64_t i) const { return query_position(i) - pair_position(i); }
  int64_t first_query_position() const { return query_position(0); }
  // Input length: the lead-in, the statements, the distance and the last query's key and value.
  int64_t length() const { return query_position(num_pairs() - 1) + 2; }
  // The token at `position` (0 <= position < length()).
  int64_t token_at(int64_t position) const;
  // Tokens [begin, end) as a vector.
  std::vector<int64_t> tokens(int64_t begin, int64_t end) const;
};

// K distinct keys with random values, statements `gap` filler tokens apart, each key rewritten `rewrites`
// times, asked in the order stated or (shuffle_questions) in a random order, or as `draw` says; requires
// distance >= K (2 + gap) so that the questions follow all statements.
RecallProbe make_recall_probe(const RecallVocabulary& vocabulary, int64_t num_pairs, int64_t distance, uint64_t seed,
                              int64_t gap = 0, int64_t rewrites = 0, bool shuffle_questions = false,
                              RecallProbeDraw draw = {});

// For each question of a probe, the chance that the best answerer who does not bind keys to values gets it
// right: it knows the multiset of the latest stated values and sees the answers given before this question
// (unless hidden), not which key holds which value (nor the order of statement, which in stated order alone
// would answer every question). The value is one of those not yet given, and the best guess is the most
// frequent of them:
//   chance_i = max_v n_v / sum_v n_v,  n_v = copies of v among the latest values minus those already given.
// Its mean over a probe's questions is the floor a memory must beat to show retrieval by key: 1 with one
// fact; (1/K)(1/K + 1/(K-1) + ... + 1) = 45.7% for K = 5 distinct values each asked once with the answers in
// view; 1/K with distinct values and hidden answers.
std::vector<double> key_blind_chances(const RecallProbe& probe);

}  // namespace swarmt::data
