#include "swarmt/data/synthetic/distance_recall.h"

#include <algorithm>
#include <map>

#include "swarmt/core/error.h"
#include "swarmt/core/random.h"
#include "swarmt/data/batch.h"
#include "swarmt/data/synthetic/synthetic_tasks_random.h"

namespace swarmt::data {

int64_t RecallTrainingConfig::pairs_at(double progress) const {
  SWARMT_CHECK(!pairs_schedule.empty());
  if (progress < 0) return pairs_schedule.back().pairs;
  int64_t pairs = pairs_schedule.front().pairs;
  for (const auto& stage : pairs_schedule)
    if (progress >= stage.from) pairs = stage.pairs;
  return pairs;
}

int64_t RecallTrainingConfig::max_distance() const {
  int64_t d = 0;
  for (const auto& band : distances) d = std::max(d, band.max);
  return d;
}

namespace {

struct Range {
  const char* name;
  int64_t begin, end;
};

std::vector<Range> ranges_of(const RecallVocabulary& v) {
  return {{"keys", v.key_begin, v.key_end}, {"values", v.value_begin, v.value_end},
          {"filler", v.filler_begin, v.filler_end}};
}

void validate_vocabulary(const RecallVocabulary& v, int64_t vocab_size, const std::string& where) {
  const auto ranges = ranges_of(v);
  for (const auto& r : ranges)
    SWARMT_CHECK_INPUT(r.begin >= 0 && r.begin < r.end && (vocab_size <= 0 || r.end <= vocab_size), where,
                       ": the ", r.name, " range [", r.begin, ", ", r.end, ") must be non-empty",
                       vocab_size > 0 ? str_cat(" and inside the vocabulary [0, ", vocab_size, ")") : std::string());
  for (size_t i = 0; i < ranges.size(); ++i)
    for (size_t j = i + 1; j < ranges.size(); ++j)
      SWARMT_CHECK_INPUT(ranges[i].end <= ranges[j].begin || ranges[j].end <= ranges[i].begin, where, ": the ",
                         ranges[i].name, " and ", ranges[j].name, " ranges overlap; they must be disjoint");
}

// k distinct ids of [begin, end).
std::vector<int64_t> distinct_ids(int64_t begin, int64_t end, int64_t k, TaskRng& rng) {
  auto ids = rng.sample_without_replacement(end - begin, k);
  for (auto& id : ids) id += begin;
  return ids;
}

int64_t draw_distance(const std::vector<DistanceBand>& bands, TaskRng& rng) {
  double total = 0;
  for (const auto& b : bands) total += b.weight;
  double u = rng.uniform_real() * total;
  for (const auto& b : bands) {
    if (u < b.weight || &b == &bands.back()) return rng.uniform_int(b.min, b.max);
    u -= b.weight;
  }
  return bands.back().max;
}

}  // namespace

void validate_recall_training_config(const RecallTrainingConfig& c, int64_t sequence_length, const std::string& where) {
  validate_vocabulary(c.vocabulary, 0, where);
  SWARMT_CHECK_INPUT(!c.pairs_schedule.empty(), where, ": 'pairs' must not be empty");
  SWARMT_CHECK_INPUT(c.pairs_schedule.front().from == 0.0, where, ": the first stage of 'pairs' must start at 0");
  int64_t max_pairs = 0;
  for (size_t i = 0; i < c.pairs_schedule.size(); ++i) {
    const auto& s = c.pairs_schedule[i];
    SWARMT_CHECK_INPUT(s.from >= 0 && s.from < 1 && (i == 0 || s.from > c.pairs_schedule[i - 1].from), where,
                       ": the stages of 'pairs' must start at increasing fractions of training in [0, 1)");
    SWARMT_CHECK_INPUT(s.pairs >= 1 && s.pairs <= c.vocabulary.num_keys(), where, ": 'pairs' = ", s.pairs,
                       " needs that many distinct keys; the key range holds ", c.vocabulary.num_keys());
    max_pairs = std::max(max_pairs, s.pairs);
  }
  SWARMT_CHECK_INPUT(!c.distances.empty(), where, ": 'distances' must not be empty");
  for (const auto& b : c.distances)
    SWARMT_CHECK_INPUT(b.weight > 0 && b.min >= 2 && b.min <= b.max && b.max <= sequence_length - 2, where,
                       ": each band of 'distances' needs a positive weight and 2 <= min <= max <= sequence_length - 2 (",
                       sequence_length - 2, "); got [", b.weight, ", ", b.min, ", ", b.max, "]");
  SWARMT_CHECK_INPUT(c.queries_per_pair >= 1 && c.queries_per_pair <= 16, where, ": 'queries_per_pair' must be in [1, 16]");
  SWARMT_CHECK_INPUT(c.rewrites >= 0 && c.rewrites <= 16 && c.rewrites < c.vocabulary.num_values(), where,
                     ": 'rewrites' must be in [0, 16] and below the number of values (", c.vocabulary.num_values(),
                     "); got ", c.rewrites);
  SWARMT_CHECK_INPUT(c.gap >= 0 && c.gap <= sequence_length, where, ": 'gap' must be in [0, sequence_length] (",
                     sequence_length, "); got ", c.gap);
  if (c.layout == RecallLayout::kProbe) {
    SWARMT_CHECK_INPUT(c.queries_per_pair == 1, where,
                       ": the \"probe\" layout asks every key once; 'queries_per_pair' must be 1 (got ",
                       c.queries_per_pair, ")");
    SWARMT_CHECK_INPUT(!c.draw.distinct_values || max_pairs + c.rewrites <= c.vocabulary.num_values(), where,
                       ": 'distinct_values' with ", max_pairs, " pairs and ", c.rewrites, " rewrites needs ",
                       max_pairs + c.rewrites, " values; 'values' has ", c.vocabulary.num_values());
    // The longest lead-in (gap), every statement, and the shortest distance that follows them all.
    const int64_t stride = 2 + c.gap;
    const int64_t needed = c.gap + stride * (max_pairs * (1 + c.rewrites) - 1) + stride * max_pairs + 2;
    SWARMT_CHECK_INPUT(needed <= sequence_length + 1, where, ": ", max_pairs, " pairs with ", c.rewrites,
                       " rewrites and 'gap' ", c.gap, " need ", needed - 1, " tokens before their questions are "
                       "answered; the sequence has ", sequence_length);
    return;
  }
  SWARMT_CHECK_INPUT(c.gap == 0, where, ": 'gap' applies to the \"probe\" layout only (set \"layout\": \"probe\")");
  // Each statement takes 2 slots and each query 2 more; at most half the sequence is statements and
  // queries, so random placement always finds room quickly.
  SWARMT_CHECK_INPUT(2 * max_pairs * (1 + c.rewrites + c.queries_per_pair) <= sequence_length / 2, where, ": ",
                     max_pairs, " pairs with ", c.rewrites, " rewrites and ", c.queries_per_pair,
                     " queries each do not fit into half of a sequence of ", sequence_length, " tokens");
}

namespace {

// The probe layout: a lead-in of U{0..gap} filler tokens (so that with gap = T - 2 each pair keeps to one
// segment wherever the lead-in ends), the statements `gap` apart, and the questions spaced like them, the
// first d tokens after the last round's first statement (in stated order every key is then asked d after
// its latest statement; shuffled, d is the questions' mean distance). d is drawn from the bands and kept to
// what fits: questions after every statement, the last answer inside the sequence.
RecallSequence generate_probe_layout_sequence(const RecallTrainingConfig& c, int64_t N, int64_t num_pairs,
                                              uint64_t seed) {
  TaskRng rng(seed);
  const int64_t stride = 2 + c.gap;
  const int64_t lead_in = rng.uniform_int(0, c.gap);
  const int64_t lowest = stride * num_pairs;
  const int64_t highest = N - 1 - lead_in - stride * (num_pairs * (1 + c.rewrites) - 1);
  SWARMT_CHECK(lowest <= highest, "recall: ", num_pairs, " pairs do not fit ", N, " tokens in the probe layout");
  int64_t d = draw_distance(c.distances, rng);
  for (int attempt = 0; attempt < 64 && (d < lowest || d > highest); ++attempt) d = draw_distance(c.distances, rng);
  d = std::clamp(d, lowest, highest);
  auto probe = make_recall_probe(c.vocabulary, num_pairs, d, rng.next_u64(), c.gap, c.rewrites, c.shuffle_questions,
                                 c.draw);
  probe.lead_in = lead_in;
  RecallSequence s;
  s.tokens = probe.tokens(0, N + 1);
  s.targets.assign(static_cast<size_t>(N), kIgnoreIndex);
  for (int64_t i = 0; i < num_pairs; ++i) {
    const auto key = probe.keys[static_cast<size_t>(i)], value = probe.values[static_cast<size_t>(i)];
    const int64_t at = probe.query_position(i);
    s.targets[static_cast<size_t>(at)] = value;
    s.queries.push_back({at, probe.pair_position(i), probe.question_distance(i), key, value, 1 + c.rewrites});
  }
  return s;
}

}  // namespace

RecallSequence generate_recall_sequence(const RecallTrainingConfig& c, int64_t N, int64_t num_pairs, uint64_t seed) {
  if (c.layout == RecallLayout::kProbe) return generate_probe_layout_sequence(c, N, num_pairs, seed);
  const auto& v = c.vocabulary;
  TaskRng rng(seed);
  RecallSequence s;
  s.tokens.assign(static_cast<size_t>(N + 1), 0);
  s.targets.assign(static_cast<size_t>(N), kIgnoreIndex);
  std::vector<char> used(static_cast<size_t>(N + 1), 0);
  const auto keys = distinct_ids(v.key_begin, v.key_end, num_pairs, rng);
  const int64_t Q = c.queries_per_pair;
  for (int64_t i = 0; i < num_pairs; ++i) {
    const int64_t key = keys[static_cast<size_t>(i)];
    const int64_t value = rng.uniform_int(v.value_begin, v.value_end - 1);
    const int64_t rewrites = c.rewrites > 0 ? rng.uniform_int(0, c.rewrites) : 0;
    bool placed = false;
    for (int attempt = 0; attempt < 4096 && !placed; ++attempt) {
      // The chain statement -> its rewrites -> question 1 -> question 2 ..., each d_j after the previous
      // occurrence. Every rewrite must fit; questions that would not are dropped, but the first always
      // fits when the rewrites do (d <= N - 2).
      std::vector<int64_t> offsets;  // of each later occurrence from the first statement
      int64_t reach = 0;
      bool fits = true;
      for (int64_t q = 0; q < rewrites + Q; ++q) {
        const int64_t d = draw_distance(c.distances, rng);
        if (reach + d > N - 2) {
          fits = q > rewrites;  // at least one question after the last rewrite
          break;
        }
        reach += d;
        offsets.push_back(reach);
      }
      if (!fits) continue;
      // The statement at p, p + 1; each later occurrence at p + offset, p + offset + 1 <= N - 1.
      const int64_t p = rng.uniform_int(0, N - 2 - reach);
      std::vector<int64_t> slots{p, p + 1};
      for (int64_t offset : offsets) {
        slots.push_back(p + offset);
        slots.push_back(p + offset + 1);
      }
      bool free = true;
      for (int64_t slot : slots) free = free && !used[static_cast<size_t>(slot)];
      if (!free) continue;
      for (int64_t slot : slots) used[static_cast<size_t>(slot)] = 1;
      s.tokens[static_cast<size_t>(p)] = key;
      s.tokens[static_cast<size_t>(p + 1)] = value;
      int64_t previous = p, latest = value;
      for (size_t j = 0; j < offsets.size(); ++j) {
        const int64_t at = p + offsets[j];
        s.tokens[static_cast<size_t>(at)] = key;
        if (static_cast<int64_t>(j) < rewrites) {
          // A restatement: a value the key has not held just before, unscored.
          int64_t fresh = rng.uniform_int(v.value_begin, v.value_end - 2);
          if (fresh >= latest) ++fresh;
          latest = fresh;
        } else {
          s.targets[static_cast<size_t>(at)] = latest;
          s.queries.push_back({at, previous, at - previous, key, latest, 1 + rewrites});
        }
        s.tokens[static_cast<size_t>(at + 1)] = latest;
        previous = at;
      }
      placed = true;
    }
    SWARMT_CHECK(placed, "recall: no room for pair ", i, " of ", num_pairs, " in ", N, " tokens");
  }
  for (int64_t t = 0; t <= N; ++t)
    if (!used[static_cast<size_t>(t)])
      s.tokens[static_cast<size_t>(t)] = rng.uniform_int(v.filler_begin, v.filler_end - 1);
  std::sort(s.queries.begin(), s.queries.end(), [](const RecallQuery& a, const RecallQuery& b) { return a.position < b.position; });
  return s;
}

namespace {

void read_range(const JsonView& v, const char* key, int64_t& begin, int64_t& end) {
  if (!v.has(key)) return;
  auto pair = v.get_int_list(key);
  SWARMT_CHECK_INPUT(pair.size() == 2, v.describe(key), " must be [begin, end)");
  begin = pair[0];
  end = pair[1];
}

}  // namespace

RecallTrainingConfig recall_training_config_from_json(const JsonView& v, int64_t vocab_size) {
  RecallTrainingConfig c;
  read_range(v, "keys", c.vocabulary.key_begin, c.vocabulary.key_end);
  read_range(v, "values", c.vocabulary.value_begin, c.vocabulary.value_end);
  read_range(v, "filler", c.vocabulary.filler_begin, c.vocabulary.filler_end);
  validate_vocabulary(c.vocabulary, vocab_size, v.describe("keys/values/filler"));
  if (v.has("pairs")) {
    const Json& pairs = v.raw("pairs");
    c.pairs_schedule.clear();
    if (pairs.is_number_integer()) {
      c.pairs_schedule.push_back({0.0, pairs.get<int64_t>()});
    } else {
      SWARMT_CHECK_INPUT(pairs.is_array() && !pairs.empty(), v.describe("pairs"),
                         " must be an integer or a list of [fraction of training, pairs]");
      for (const auto& stage : pairs) {
        SWARMT_CHECK_INPUT(stage.is_array() && stage.size() == 2 && stage[0].is_number() && stage[1].is_number_integer(),
                           v.describe("pairs"), " entries must be [fraction of training, pairs]; got ", json_preview(stage));
        c.pairs_schedule.push_back({stage[0].get<double>(), stage[1].get<int64_t>()});
      }
    }
  }
  if (v.has("distances")) {
    const Json& bands = v.raw("distances");
    SWARMT_CHECK_INPUT(bands.is_array() && !bands.empty(), v.describe("distances"),
                       " must be a list of [weight, min, max] bands");
    c.distances.clear();
    for (const auto& band : bands) {
      SWARMT_CHECK_INPUT(band.is_array() && band.size() == 3 && band[0].is_number() && band[1].is_number_integer() &&
                             band[2].is_number_integer(),
                         v.describe("distances"), " entries must be [weight, min, max]; got ", json_preview(band));
      c.distances.push_back({band[0].get<double>(), band[1].get<int64_t>(), band[2].get<int64_t>()});
    }
  }
  c.queries_per_pair = v.get_int("queries_per_pair", c.queries_per_pair);
  c.rewrites = v.get_int("rewrites", c.rewrites);
  const std::string layout = v.get_string("layout", "random");
  SWARMT_CHECK_INPUT(layout == "random" || layout == "probe", v.describe("layout"),
                     " must be \"random\" (pairs anywhere) or \"probe\" (pairs in a row, then the questions); got \"",
                     layout, "\"");
  c.layout = layout == "probe" ? RecallLayout::kProbe : RecallLayout::kRandom;
  c.gap = v.get_int("gap", c.gap);
  if (v.has("shuffle_questions")) {
    SWARMT_CHECK_INPUT(c.layout == RecallLayout::kProbe, v.describe("shuffle_questions"),
                       " applies to the \"probe\" layout only (set \"layout\": \"probe\")");
    c.shuffle_questions = v.get_bool("shuffle_questions");
  }
  const auto read_probe_flag = [&](const char* field, bool& flag) {
    if (!v.has(field)) return;
    SWARMT_CHECK_INPUT(c.layout == RecallLayout::kProbe, v.describe(field),
                       " applies to the \"probe\" layout only (set \"layout\": \"probe\")");
    flag = v.get_bool(field);
  };
  read_probe_flag("distinct_values", c.draw.distinct_values);
  read_probe_flag("hidden_answers", c.draw.hidden_answers);
  return c;
}

Json recall_training_config_to_json(const RecallTrainingConfig& c) {
  Json pairs = Json::array(), bands = Json::array();
  for (const auto& s : c.pairs_schedule) pairs.push_back({s.from, s.pairs});
  for (const auto& b : c.distances) bands.push_back({b.weight, b.min, b.max});
  const auto& v = c.vocabulary;
  Json j{{"pairs", pairs}, {"distances", bands}, {"queries_per_pair", c.queries_per_pair},
         {"rewrites", c.rewrites}, {"keys", {v.key_begin, v.key_end}}, {"values", {v.value_begin, v.value_end}},
         {"filler", {v.filler_begin, v.filler_end}}, {"layout", c.layout == RecallLayout::kProbe ? "probe" : "random"}};
  if (c.layout == RecallLayout::kProbe) {
    j["gap"] = c.gap;
    j["shuffle_questions"] = c.shuffle_questions;
    j["distinct_values"] = c.draw.distinct_values;
    j["hidden_answers"] = c.draw.hidden_answers;
  }
  return j;
}

int64_t RecallProbe::token_at(int64_t position) const {
  const int64_t stride = 2 + gap;
  const auto statements = static_cast<int64_t>(statement_keys.size());
  int64_t offset = position - statement_position(0);
  if (offset >= 0 && offset < stride * statements && offset % stride < 2) {
    const auto j = static_cast<size_t>(offset / stride);
    return offset % stride == 0 ? statement_keys[j] : statement_values[j];
  }
  offset = position - first_query_position();
  if (offset >= 0 && offset < stride * num_pairs() && offset % stride < 2) {
    const auto i = static_cast<size_t>(offset / stride);
    if (offset % stride == 0) return keys[i];
    if (!answers_hidden) return values[i];
  }
  const uint64_t span = static_cast<uint64_t>(vocabulary.filler_end - vocabulary.filler_begin);
  return vocabulary.filler_begin + static_cast<int64_t>(mix_key(filler_seed, static_cast<uint64_t>(position)) % span);
}

std::vector<int64_t> RecallProbe::tokens(int64_t begin, int64_t end) const {
  std::vector<int64_t> out;
  out.reserve(static_cast<size_t>(std::max<int64_t>(0, end - begin)));
  for (int64_t t = begin; t < end; ++t) out.push_back(token_at(t));
  return out;
}

RecallProbe make_recall_probe(const RecallVocabulary& vocabulary, int64_t num_pairs, int64_t distance, uint64_t seed,
                              int64_t gap, int64_t rewrites, bool shuffle_questions, RecallProbeDraw draw) {
  validate_vocabulary(vocabulary, 0, "recall probe");
  SWARMT_CHECK_INPUT(num_pairs >= 1 && num_pairs <= vocabulary.num_keys(), "--pairs: ", num_pairs,
                     " pairs need that many distinct keys; there are ", vocabulary.num_keys());
  SWARMT_CHECK_INPUT(gap >= 0 && gap <= 1 << 20, "--gap must be in [0, 2^20] (got ", gap, ")");
  SWARMT_CHECK_INPUT(rewrites >= 0 && rewrites < vocabulary.num_values() && rewrites <= 1024, "--rewrites must be in [0, ",
                     std::min<int64_t>(1024, vocabulary.num_values() - 1), "] (each rewrite needs a new value; got ",
                     rewrites, ")");
  SWARMT_CHECK_INPUT(distance >= (2 + gap) * num_pairs, "--distances: ", distance, " is shorter than the ", num_pairs,
                     " pairs (", (2 + gap) * num_pairs, " tokens with their gaps); the questions must follow every pair");
  SWARMT_CHECK_INPUT(!draw.distinct_values || num_pairs + rewrites <= vocabulary.num_values(), "--distinct-values: ",
                     num_pairs, " pairs rewritten ", rewrites, " times need ", num_pairs + rewrites,
                     " values (each key a new one per round, none shared in a round); there are ", vocabulary.num_values());
  TaskRng rng(seed);
  RecallProbe p;
  p.vocabulary = vocabulary;
  p.keys = distinct_ids(vocabulary.key_begin, vocabulary.key_end, num_pairs, rng);
  if (draw.distinct_values) {
    p.values = distinct_ids(vocabulary.value_begin, vocabulary.value_end, num_pairs, rng);
  } else {
    for (int64_t i = 0; i < num_pairs; ++i)
      p.values.push_back(rng.uniform_int(vocabulary.value_begin, vocabulary.value_end - 1));
  }
  p.distance = distance;
  p.gap = gap;
  p.filler_seed = rng.next_u64();
  p.statement_keys = p.keys;
  p.statement_values = p.values;
  // Each later round: the keys in a new order, each with a value it has not held in this probe.
  std::vector<std::vector<int64_t>> held(static_cast<size_t>(num_pairs));
  for (int64_t i = 0; i < num_pairs; ++i) held[static_cast<size_t>(i)] = {p.values[static_cast<size_t>(i)]};
  for (int64_t round = 0; round < rewrites; ++round) {
    const auto order = rng.sample_without_replacement(num_pairs, num_pairs);
    std::vector<int64_t> keys, values;
    for (int64_t i : order) {
      auto& history = held[static_cast<size_t>(i)];
      // With distinct values also none another key took this round: at most rewrites + K - 1 values are
      // excluded, fewer than there are, so the loop ends.
      const auto taken = [&](int64_t value) {
        return std::find(history.begin(), history.end(), value) != history.end() ||
               (draw.distinct_values && std::find(values.begin(), values.end(), value) != values.end());
      };
      int64_t value = 0;
      do value = rng.uniform_int(vocabulary.value_begin, vocabulary.value_end - 1);
      while (taken(value));
      history.push_back(value);
      keys.push_back(p.keys[static_cast<size_t>(i)]);
      values.push_back(value);
    }
    p.statement_keys.insert(p.statement_keys.end(), keys.begin(), keys.end());
    p.statement_values.insert(p.statement_values.end(), values.begin(), values.end());
    if (round + 1 == rewrites) {
      p.keys = keys;  // asked in the order of the last round
      p.values = values;
    }
  }
  p.answers_hidden = draw.hidden_answers;
  if (shuffle_questions) {
    // Question i asks the pair stated at place asked_from[i] of the last round.
    p.asked_from = rng.sample_without_replacement(num_pairs, num_pairs);
    std::vector<int64_t> keys, values;
    for (int64_t place : p.asked_from) {
      keys.push_back(p.keys[static_cast<size_t>(place)]);
      values.push_back(p.values[static_cast<size_t>(place)]);
    }
    p.keys = keys;
    p.values = values;
  }
  return p;
}

std::vector<double> key_blind_chances(const RecallProbe& probe) {
  std::map<int64_t, int64_t> left;  // value -> copies among the latest values not yet given to an asked key
  for (int64_t v : probe.values_in_last_round()) ++left[v];
  std::vector<double> chances;
  for (int64_t i = 0; i < probe.num_pairs(); ++i) {
    int64_t most = 0, total = 0;
    for (const auto& [value, copies] : left) {
      most = std::max(most, copies);
      total += copies;
    }
    chances.push_back(static_cast<double>(most) / static_cast<double>(total));
    if (probe.answers_hidden) continue;
    auto it = left.find(probe.values[static_cast<size_t>(i)]);
    SWARMT_CHECK(it != left.end() && it->second > 0, "recall probe: question ", i, " asks a value no key holds");
    if (--it->second == 0) left.erase(it);
  }
  return chances;
}

}  // namespace swarmt::data
