#include "swarmt/data/synthetic/distance_recall.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "bad_input.h"
#include "swarmt/data/batch.h"
#include "swarmt/data/source_factory.h"
#include "swarmt/data/synthetic_source.h"

namespace swarmt::data {
namespace {

using testing::error_of;

constexpr int64_t kLength = 256;

RecallTrainingConfig default_config() { return RecallTrainingConfig{}; }

TEST(DistanceRecall, every_query_repeats_its_pair_at_the_recorded_distance) {
  const auto config = default_config();
  for (uint64_t seed = 0; seed < 200; ++seed) {
    const auto s = generate_recall_sequence(config, kLength, 8, seed);
    ASSERT_EQ(s.tokens.size(), static_cast<size_t>(kLength + 1));
    ASSERT_EQ(s.queries.size(), 8u);
    for (const auto& q : s.queries) {
      EXPECT_EQ(q.distance, q.position - q.previous_position);
      EXPECT_EQ(s.tokens[q.previous_position], q.key);
      EXPECT_EQ(s.tokens[q.previous_position + 1], q.value);
      EXPECT_EQ(s.tokens[q.position], q.key);
      EXPECT_EQ(s.tokens[q.position + 1], q.value);
      EXPECT_TRUE((q.distance >= 10 && q.distance <= 60) || (q.distance >= 65 && q.distance <= 200)) << q.distance;
      EXPECT_LT(q.position + 1, kLength);  // the value after a question is an input too
    }
  }
}

TEST(DistanceRecall, keys_are_distinct_and_appear_only_in_their_pair_and_question) {
  const auto config = default_config();
  for (uint64_t seed = 0; seed < 200; ++seed) {
    const auto s = generate_recall_sequence(config, kLength, 8, seed);
    std::map<int64_t, int> occurrences;  // one question per key: the pair and the question
    for (int64_t t = 0; t <= kLength; ++t)
      if (config.vocabulary.is_key(s.tokens[t])) ++occurrences[s.tokens[t]];
    EXPECT_EQ(occurrences.size(), 8u);  // 8 distinct keys
    for (const auto& [key, count] : occurrences) EXPECT_EQ(count, 2) << "key " << key;
  }
}

TEST(DistanceRecall, loss_is_taken_only_at_questions_and_targets_the_value) {
  const auto config = default_config();
  for (uint64_t seed = 0; seed < 50; ++seed) {
    const auto s = generate_recall_sequence(config, kLength, 4, seed);
    std::set<int64_t> questions;
    for (const auto& q : s.queries) {
      questions.insert(q.position);
      EXPECT_EQ(s.targets[q.position], q.value);
    }
    for (int64_t t = 0; t < kLength; ++t) {
      if (!questions.count(t)) {
        EXPECT_EQ(s.targets[t], kIgnoreIndex) << "position " << t;
      }
    }
  }
}

TEST(DistanceRecall, filler_is_disjoint_from_keys_and_values) {
  const auto config = default_config();
  const auto s = generate_recall_sequence(config, kLength, 8, 3);
  std::set<int64_t> slots;
  for (const auto& q : s.queries)
    for (int64_t t : {q.previous_position, q.previous_position + 1, q.position, q.position + 1}) slots.insert(t);
  int64_t filler = 0;
  for (int64_t t = 0; t <= kLength; ++t) {
    if (slots.count(t)) continue;
    EXPECT_TRUE(config.vocabulary.is_filler(s.tokens[t])) << "position " << t << " holds " << s.tokens[t];
    ++filler;
  }
  EXPECT_EQ(filler, kLength + 1 - 32);
}

TEST(DistanceRecall, distances_follow_the_mixture) {
  const auto config = default_config();
  int64_t far = 0, total = 0;
  for (uint64_t seed = 0; seed < 2000; ++seed)
    for (const auto& q : generate_recall_sequence(config, kLength, 2, seed).queries) {
      far += q.distance >= 65;
      ++total;
    }
  const double share = static_cast<double>(far) / static_cast<double>(total);
  EXPECT_NEAR(share, 0.1, 0.02) << far << " of " << total;  // 4000 draws: sd 0.005
}

TEST(DistanceRecall, generation_is_a_pure_function_of_the_seed) {
  const auto config = default_config();
  const auto a = generate_recall_sequence(config, kLength, 8, 11);
  const auto b = generate_recall_sequence(config, kLength, 8, 11);
  const auto c = generate_recall_sequence(config, kLength, 8, 12);
  EXPECT_EQ(a.tokens, b.tokens);
  EXPECT_EQ(a.targets, b.targets);
  EXPECT_NE(a.tokens, c.tokens);
}

// Several questions per key form a chain: each comes its own distance after the key's previous
// occurrence, so the distance is always what must be remembered; questions that do not fit are dropped.
TEST(DistanceRecall, several_questions_per_pair_are_chained_from_the_previous_occurrence) {
  auto config = default_config();
  config.queries_per_pair = 3;
  int64_t total = 0;
  for (uint64_t seed = 0; seed < 100; ++seed) {
    const auto s = generate_recall_sequence(config, kLength, 4, seed);
    std::map<int64_t, std::vector<RecallQuery>> per_key;
    for (const auto& q : s.queries) per_key[q.key].push_back(q);  // in position order
    ASSERT_EQ(per_key.size(), 4u);
    for (const auto& [key, questions] : per_key) {
      ASSERT_GE(questions.size(), 1u);
      ASSERT_LE(questions.size(), 3u);
      for (size_t j = 1; j < questions.size(); ++j) EXPECT_EQ(questions[j].previous_position, questions[j - 1].position);
      int64_t occurrences = 0;
      for (int64_t t = 0; t <= kLength; ++t) occurrences += s.tokens[t] == key;
      EXPECT_EQ(occurrences, 1 + static_cast<int64_t>(questions.size()));
      for (const auto& q : questions)
        EXPECT_TRUE((q.distance >= 10 && q.distance <= 60) || (q.distance >= 65 && q.distance <= 200)) << q.distance;
    }
    total += static_cast<int64_t>(s.queries.size());
  }
  EXPECT_GT(total, 100 * 4 * 2);  // most chains keep more than one question
}

TEST(DistanceRecall, pairs_follow_the_curriculum) {
  const auto config = default_config();  // 2 -> 4 -> 8 at 0, 15 %, 30 %
  EXPECT_EQ(config.pairs_at(0.0), 2);
  EXPECT_EQ(config.pairs_at(0.149), 2);
  EXPECT_EQ(config.pairs_at(0.15), 4);
  EXPECT_EQ(config.pairs_at(0.5), 8);
  EXPECT_EQ(config.pairs_at(-1.0), 8);  // validation data: the last stage
}

TEST(DistanceRecall, synthetic_source_follows_training_progress) {
  Json config = parse_json(R"({"type": "synthetic", "tasks": [{"task": "recall"}]})", "test");
  const auto tok = load_text_tokenizer("byte");
  const int64_t planned = 1000;
  auto source = make_data_source(JsonView(config, "train.json", "data.train."), tok, kLength, 1, planned);
  auto questions = [&](int64_t index) {
    const auto s = source->sample(index);
    int64_t n = 0;
    for (auto t : s.targets) n += t != kIgnoreIndex;
    return n;
  };
  EXPECT_EQ(questions(0), 2);
  EXPECT_EQ(questions(200), 4);
  EXPECT_EQ(questions(999), 8);
  auto validation = make_data_source(JsonView(config, "train.json", "data.validation."), tok, kLength, 1);
  int64_t n = 0;
  for (auto t : validation->sample(0).targets) n += t != kIgnoreIndex;
  EXPECT_EQ(n, 8);
}

// Replays a training sequence: the value each key held at each point, and its statements.
struct KeyHistory {
  std::map<int64_t, int64_t> latest;      // key -> value after the last statement so far
  std::map<int64_t, int> statements;      // key -> unscored occurrences (first statement and rewrites)
};

TEST(DistanceRecall, with_rewrites_every_question_asks_for_the_latest_value) {
  auto config = default_config();
  config.rewrites = 3;
  config.queries_per_pair = 2;
  std::map<int64_t, int> rewrite_counts;
  for (uint64_t seed = 0; seed < 300; ++seed) {
    const auto s = generate_recall_sequence(config, kLength, 4, seed);
    std::set<int64_t> question_positions;
    for (const auto& q : s.queries) question_positions.insert(q.position);
    KeyHistory history;
    for (int64_t t = 0; t + 1 <= kLength; ++t) {
      const int64_t token = s.tokens[t];
      if (!config.vocabulary.is_key(token)) continue;
      const int64_t value = s.tokens[t + 1];
      ASSERT_TRUE(config.vocabulary.is_value(value)) << "a key is always followed by a value";
      if (question_positions.count(t)) {
        // The answer is the latest statement's value; the loss is taken here and nowhere else.
        ASSERT_TRUE(history.latest.count(token)) << "a question before its key was stated";
        EXPECT_EQ(s.targets[t], history.latest[token]);
        EXPECT_EQ(value, history.latest[token]);
      } else {
        EXPECT_EQ(s.targets[t], kIgnoreIndex) << "a statement or rewrite is not scored";
        if (history.latest.count(token)) {
          EXPECT_NE(value, history.latest[token]) << "a rewrite changes the value";
        }
        history.latest[token] = value;
        ++history.statements[token];
      }
    }
    for (const auto& q : s.queries) {
      EXPECT_EQ(q.statements, history.statements[q.key]);
      EXPECT_EQ(q.distance, q.position - q.previous_position);
      EXPECT_EQ(s.tokens[q.previous_position], q.key);
      EXPECT_LT(q.previous_position, q.position);
    }
    // Every question comes after all of its key's statements.
    for (const auto& q : s.queries)
      for (int64_t t = q.position + 1; t < kLength; ++t)
        if (s.tokens[t] == q.key) {
          EXPECT_TRUE(question_positions.count(t)) << "a rewrite after a question";
        }
    for (const auto& [key, n] : history.statements) ++rewrite_counts[n - 1];
  }
  // Keys are rewritten 0..R times, each count common, so frequency does not tell which key is asked.
  for (int r = 0; r <= 3; ++r) EXPECT_GT(rewrite_counts[r], 150) << r << " rewrites";
  EXPECT_EQ(rewrite_counts.size(), 4u);
}

TEST(DistanceRecall, config_round_trips_through_json) {
  Json j = parse_json(R"({"pairs": [[0, 1], [0.5, 3]], "distances": [[1, 5, 9]], "queries_per_pair": 2,
                          "keys": [10, 20], "values": [20, 40], "filler": [40, 100]})", "test");
  const auto config = recall_training_config_from_json(JsonView(j, "test"), 259);
  EXPECT_EQ(config.pairs_at(0.7), 3);
  EXPECT_EQ(config.max_distance(), 9);
  EXPECT_EQ(config.vocabulary.key_begin, 10);
  EXPECT_EQ(config.vocabulary.filler_end, 100);
  EXPECT_EQ(recall_training_config_to_json(config), recall_training_config_to_json(
      recall_training_config_from_json(JsonView(recall_training_config_to_json(config), "again"), 259)));
}

TEST(DistanceRecall, bad_configs_are_refused_naming_the_field) {
  const auto tok = load_text_tokenizer("byte");
  auto error = [&](const std::string& task) {
    Json config = parse_json(R"({"type": "synthetic", "tasks": [)" + task + "]}", "test");
    return error_of([&] { make_data_source(JsonView(config, "train.json", "data.train."), tok, kLength, 1, 10); });
  };
  EXPECT_NE(error(R"({"task": "recall", "keys": [1, 70]})").find("overlap"), std::string::npos);
  EXPECT_NE(error(R"({"task": "recall", "filler": [129, 300]})").find("vocabulary"), std::string::npos);
  EXPECT_NE(error(R"({"task": "recall", "distances": [[1, 10, 300]]})").find("sequence_length - 2"), std::string::npos);
  EXPECT_NE(error(R"({"task": "recall", "pairs": 100})").find("distinct keys"), std::string::npos);
  EXPECT_NE(error(R"({"task": "recall", "pairs": [[0.2, 4]]})").find("start at 0"), std::string::npos);
  EXPECT_NE(error(R"({"task": "recall", "pairs": 40})").find("do not fit"), std::string::npos);
  EXPECT_NE(error(R"({"task": "recall", "distance": 3})").find("distance"), std::string::npos);  // unknown key
  EXPECT_NE(error(R"({"task": "recall", "distances": [[0.5, 10]]})").find("[weight, min, max]"), std::string::npos);
  EXPECT_NE(error(R"({"task": "recall", "rewrites": -1})").find("'rewrites'"), std::string::npos);
  EXPECT_NE(error(R"({"task": "recall", "pairs": 8, "rewrites": 8})").find("do not fit"), std::string::npos);
}

// The probe layout (ARMT 2024's associative retrieval): with gap = T - 2 every statement keeps to one
// segment of T tokens wherever the lead-in ends, all questions follow all statements, each key is asked
// once, d after its statement, and the answer is its value.
TEST(DistanceRecall, probe_layout_puts_each_pair_in_its_own_segment_and_asks_every_key_after_all_of_them) {
  auto config = default_config();
  config.layout = RecallLayout::kProbe;
  config.gap = 14;  // T = 16
  config.shuffle_questions = false;  // every question exactly d after its pair
  config.distances = {{1, 80, 160}};
  constexpr int64_t kSegment = 16;
  std::set<int64_t> lead_ins;
  for (uint64_t seed = 0; seed < 300; ++seed) {
    const int64_t pairs = 1 + static_cast<int64_t>(seed % 5);
    const auto s = generate_recall_sequence(config, kLength, pairs, seed);
    ASSERT_EQ(s.tokens.size(), static_cast<size_t>(kLength + 1));
    ASSERT_EQ(s.queries.size(), static_cast<size_t>(pairs)) << "every key asked once";
    std::set<int64_t> statement_segments, keys;
    int64_t last_statement = -1;
    for (const auto& q : s.queries) {
      EXPECT_EQ(s.tokens[q.previous_position], q.key);
      EXPECT_EQ(s.tokens[q.previous_position + 1], q.value);
      EXPECT_EQ(s.tokens[q.position], q.key);
      EXPECT_EQ(s.targets[q.position], q.value);
      EXPECT_EQ(q.distance, q.position - q.previous_position);
      EXPECT_GE(q.distance, 80);
      EXPECT_LE(q.distance, 160);
      EXPECT_EQ(q.previous_position / kSegment, (q.previous_position + 1) / kSegment) << "a pair split by a segment end";
      statement_segments.insert(q.previous_position / kSegment);
      keys.insert(q.key);
      last_statement = std::max(last_statement, q.previous_position);
    }
    EXPECT_EQ(statement_segments.size(), static_cast<size_t>(pairs)) << "one pair per segment";
    EXPECT_EQ(keys.size(), static_cast<size_t>(pairs)) << "distinct keys: pairs - 1 distractors per question";
    for (const auto& q : s.queries) EXPECT_GT(q.position, last_statement + 1);
    lead_ins.insert(s.queries.front().previous_position);
    int64_t scored = 0, key_tokens = 0;
    for (int64_t t = 0; t < kLength; ++t) scored += s.targets[t] != kIgnoreIndex;
    for (int64_t t = 0; t <= kLength; ++t) key_tokens += config.vocabulary.is_key(s.tokens[t]);
    EXPECT_EQ(scored, pairs);
    EXPECT_EQ(key_tokens, 2 * pairs) << "each key stated once and asked once, nowhere else";
  }
  EXPECT_EQ(lead_ins.size(), 15u) << "lead-ins of 0..gap filler tokens";
}

// Asked in the order stated, a memory that answers its oldest unasked fact needs no key; shuffled
// questions (the probe layout's default) ask every key once in another order.
TEST(DistanceRecall, probe_layout_asks_in_a_random_order_by_default) {
  auto config = default_config();
  config.layout = RecallLayout::kProbe;
  config.gap = 2;
  config.distances = {{1, 40, 80}};
  int64_t reordered = 0;
  for (uint64_t seed = 0; seed < 200; ++seed) {
    const auto s = generate_recall_sequence(config, kLength, 5, seed);
    ASSERT_EQ(s.queries.size(), 5u);
    std::vector<int64_t> stated;  // the statements' keys in text order
    for (int64_t t = 0; t < s.queries.front().position; ++t)
      if (config.vocabulary.is_key(s.tokens[t])) stated.push_back(s.tokens[t]);
    ASSERT_EQ(stated.size(), 5u);
    std::vector<int64_t> asked;
    int64_t total_distance = 0;
    for (const auto& q : s.queries) {
      asked.push_back(q.key);
      EXPECT_EQ(s.tokens[q.previous_position], q.key);
      EXPECT_EQ(s.tokens[q.previous_position + 1], q.value);
      EXPECT_EQ(s.targets[q.position], q.value);
      EXPECT_EQ(q.distance, q.position - q.previous_position);
      EXPECT_EQ((q.position - s.queries.front().position) % 4, 0) << "questions keep the statements' stride";
      total_distance += q.distance;
    }
    EXPECT_EQ(std::set<int64_t>(asked.begin(), asked.end()), std::set<int64_t>(stated.begin(), stated.end()));
    reordered += asked != stated;
    // The drawn distance d separates the first statement from the first question; each question's own
    // distance differs from d by its slot's offset, and they average to d.
    int64_t first_statement = 0;
    while (!config.vocabulary.is_key(s.tokens[first_statement])) ++first_statement;
    EXPECT_EQ(total_distance, 5 * (s.queries.front().position - first_statement));
  }
  EXPECT_GT(reordered, 180) << "5! orders: almost every probe asks in another order than stated";
}

TEST(DistanceRecall, probe_layout_with_rewrites_asks_for_the_latest_value) {
  auto config = default_config();
  config.layout = RecallLayout::kProbe;
  config.gap = 2;
  config.rewrites = 2;
  config.distances = {{1, 30, 60}};
  for (uint64_t seed = 0; seed < 100; ++seed) {
    const auto s = generate_recall_sequence(config, kLength, 4, seed);
    std::map<int64_t, int64_t> latest;
    std::map<int64_t, int> statements;
    const int64_t first_question = s.queries.front().position;
    for (int64_t t = 0; t < first_question; ++t)
      if (config.vocabulary.is_key(s.tokens[t])) {
        latest[s.tokens[t]] = s.tokens[t + 1];
        ++statements[s.tokens[t]];
      }
    ASSERT_EQ(latest.size(), 4u);
    for (const auto& q : s.queries) {
      EXPECT_EQ(statements[q.key], 3) << "stated 1 + rewrites times before the questions";
      EXPECT_EQ(q.value, latest[q.key]);
      EXPECT_EQ(s.targets[q.position], latest[q.key]);
    }
  }
}

TEST(DistanceRecall, probe_layout_configs_are_read_and_refused_naming_the_field) {
  const auto tok = load_text_tokenizer("byte");
  auto source = [&](const std::string& task) {
    Json config = parse_json(R"({"type": "synthetic", "tasks": [)" + task + "]}", "test");
    return make_data_source(JsonView(config, "train.json", "data.train."), tok, kLength, 1, 10);
  };
  auto error = [&](const std::string& task) { return error_of([&] { source(task); }); };
  const auto s = source(R"({"task": "recall", "layout": "probe", "gap": 14, "pairs": 5, "distances": [[1, 80, 120]]})")
                     ->sample(0);
  int64_t questions = 0;
  for (auto t : s.targets) questions += t != kIgnoreIndex;
  EXPECT_EQ(questions, 5);
  EXPECT_NE(error(R"({"task": "recall", "layout": "rows"})").find("layout"), std::string::npos);
  EXPECT_NE(error(R"({"task": "recall", "gap": 4})").find("'gap' applies to the \"probe\" layout"), std::string::npos);
  EXPECT_NE(error(R"({"task": "recall", "layout": "probe", "queries_per_pair": 3})").find("queries_per_pair"),
            std::string::npos);
  EXPECT_NE(error(R"({"task": "recall", "layout": "probe", "gap": 30, "pairs": 8})").find("'gap' 30 need"),
            std::string::npos);
  EXPECT_NE(error(R"({"task": "recall", "layout": "probe", "gap": -1})").find("'gap'"), std::string::npos);
  EXPECT_NE(error(R"({"task": "recall", "shuffle_questions": true})").find("applies to the \"probe\" layout only"),
            std::string::npos);
  EXPECT_NE(error(R"({"task": "recall", "distinct_values": true})").find("distinct_values' applies to the \"probe\""),
            std::string::npos);
  EXPECT_NE(error(R"({"task": "recall", "hidden_answers": true})").find("hidden_answers' applies"),
            std::string::npos);
  EXPECT_NE(error(R"({"task": "recall", "layout": "probe", "pairs": 6, "rewrites": 3, "distinct_values": true,
                      "values": [65, 73]})").find("'distinct_values' with 6 pairs and 3 rewrites needs 9 values"),
            std::string::npos);
}

// Training data without the two ways to answer with no key: distinct values, and questions followed by filler
// where their answer would be, so that neither the most frequent value nor the values already given tell it.
TEST(DistanceRecall, probe_layout_with_distinct_values_and_hidden_answers_leaves_the_key_as_the_only_cue) {
  auto config = default_config();
  config.layout = RecallLayout::kProbe;
  config.gap = 2;
  config.rewrites = 1;
  config.distances = {{1, 30, 60}};
  config.draw = {/*distinct_values=*/true, /*hidden_answers=*/true};
  config.vocabulary.value_end = config.vocabulary.value_begin + 6;  // 5 keys and a rewrite: every value in use
  for (uint64_t seed = 0; seed < 100; ++seed) {
    const auto s = generate_recall_sequence(config, kLength, 5, seed);
    ASSERT_EQ(s.queries.size(), 5u);
    std::map<int64_t, int64_t> latest;
    const int64_t first_question = s.queries.front().position;
    std::vector<int64_t> round;  // values of the current round of statements
    for (int64_t t = 0; t < first_question; ++t)
      if (config.vocabulary.is_key(s.tokens[t])) {
        latest[s.tokens[t]] = s.tokens[t + 1];
        round.push_back(s.tokens[t + 1]);
        if (round.size() == 5) {
          EXPECT_EQ(std::set<int64_t>(round.begin(), round.end()).size(), 5u) << "no value shared in a round";
          round.clear();
        }
      }
    ASSERT_EQ(latest.size(), 5u);
    for (int64_t t = first_question; t <= kLength; ++t)
      EXPECT_FALSE(config.vocabulary.is_value(s.tokens[t])) << "no answer in the text after the first question";
    std::set<int64_t> asked;
    for (const auto& q : s.queries) {
      EXPECT_EQ(q.value, latest[q.key]) << "the answer is the asked key's latest value";
      EXPECT_EQ(s.targets[q.position], q.value) << "and still the target at the question";
      asked.insert(q.key);
    }
    EXPECT_EQ(asked.size(), 5u) << "every key asked once";
  }
  const auto round_trip = recall_training_config_from_json(JsonView(recall_training_config_to_json(config), "again"), 259);
  EXPECT_TRUE(round_trip.draw.distinct_values);
  EXPECT_TRUE(round_trip.draw.hidden_answers);
}

TEST(RecallProbe, questions_sit_exactly_at_the_distance_after_their_pairs) {
  RecallVocabulary v;
  for (int64_t distance : {8, 16, 100, 5000}) {
    const auto probe = make_recall_probe(v, 4, distance, 9);
    const auto tokens = probe.tokens(0, probe.length());
    ASSERT_EQ(static_cast<int64_t>(tokens.size()), probe.lead_in + distance + 2 * 4);
    std::set<int64_t> keys(probe.keys.begin(), probe.keys.end());
    EXPECT_EQ(keys.size(), 4u);
    for (int64_t i = 0; i < 4; ++i) {
      EXPECT_EQ(probe.query_position(i) - probe.pair_position(i), distance);
      EXPECT_EQ(tokens[probe.pair_position(i)], probe.keys[i]);
      EXPECT_EQ(tokens[probe.pair_position(i) + 1], probe.values[i]);
      EXPECT_EQ(tokens[probe.query_position(i)], probe.keys[i]);
      EXPECT_EQ(tokens[probe.query_position(i) + 1], probe.values[i]);
    }
    int64_t key_tokens = 0;
    for (auto t : tokens) {
      key_tokens += v.is_key(t);
      EXPECT_FALSE(v.is_key(t) || v.is_value(t) ? false : !v.is_filler(t));
    }
    EXPECT_EQ(key_tokens, 8);  // each key twice, nowhere else
  }
}

TEST(RecallProbe, shuffled_questions_ask_every_pair_once_in_another_order_and_distance_is_their_mean) {
  RecallVocabulary v;
  int64_t reordered = 0;
  for (uint64_t seed = 0; seed < 100; ++seed) {
    const auto probe = make_recall_probe(v, 5, 120, seed, /*gap=*/14, /*rewrites=*/0, /*shuffle_questions=*/true);
    const auto tokens = probe.tokens(0, probe.length());
    std::set<int64_t> places;
    int64_t total = 0;
    for (int64_t i = 0; i < 5; ++i) {
      EXPECT_EQ(tokens[probe.pair_position(i)], probe.keys[i]);
      EXPECT_EQ(tokens[probe.pair_position(i) + 1], probe.values[i]);
      EXPECT_EQ(tokens[probe.query_position(i)], probe.keys[i]);
      EXPECT_EQ(tokens[probe.query_position(i) + 1], probe.values[i]);
      EXPECT_EQ(probe.question_distance(i), probe.query_position(i) - probe.pair_position(i));
      EXPECT_GT(probe.query_position(i), probe.statement_position(4) + 1) << "every question after every pair";
      places.insert(probe.asked_from[i]);
      total += probe.question_distance(i);
      reordered += probe.asked_from[i] != i;
    }
    EXPECT_EQ(places.size(), 5u);
    EXPECT_EQ(total, 5 * 120);
    // Unshuffled, the same seed states the same facts and asks them in that order, each exactly 120 later.
    const auto stated = make_recall_probe(v, 5, 120, seed, 14, 0, false);
    EXPECT_EQ(std::set<int64_t>(stated.keys.begin(), stated.keys.end()), std::set<int64_t>(probe.keys.begin(), probe.keys.end()));
    for (int64_t i = 0; i < 5; ++i) EXPECT_EQ(stated.question_distance(i), 120);
  }
  EXPECT_GT(reordered, 300);
}

TEST(RecallProbe, streamed_tokens_equal_the_whole_sequence) {
  const auto probe = make_recall_probe(RecallVocabulary{}, 3, 300, 4);
  const auto all = probe.tokens(0, probe.length());
  std::vector<int64_t> streamed;
  for (int64_t begin = 0; begin < probe.length(); begin += 37) {
    auto part = probe.tokens(begin, std::min(begin + 37, probe.length()));
    streamed.insert(streamed.end(), part.begin(), part.end());
  }
  EXPECT_EQ(streamed, all);
}

TEST(RecallProbe, rewrites_restate_every_key_and_the_questions_ask_for_the_latest_value) {
  RecallVocabulary v;
  for (uint64_t seed = 0; seed < 50; ++seed) {
    const auto probe = make_recall_probe(v, 5, 200, seed, /*gap=*/3, /*rewrites=*/4);
    const auto tokens = probe.tokens(0, probe.length());
    EXPECT_EQ(probe.rewrites(), 4);
    std::map<int64_t, std::vector<int64_t>> values_of;  // key -> its values in text order
    std::map<int64_t, int64_t> last_statement;
    for (int64_t t = 0; t < probe.first_query_position(); ++t)
      if (v.is_key(tokens[t])) {
        values_of[tokens[t]].push_back(tokens[t + 1]);
        last_statement[tokens[t]] = t;
      }
    ASSERT_EQ(values_of.size(), 5u);
    for (const auto& [key, values] : values_of) {
      EXPECT_EQ(values.size(), 5u) << "every key is stated 1 + rewrites times";
      EXPECT_EQ(std::set<int64_t>(values.begin(), values.end()).size(), values.size()) << "each rewrite is a new value";
    }
    for (int64_t i = 0; i < 5; ++i) {
      const int64_t key = probe.keys[i];
      EXPECT_EQ(probe.values[i], values_of[key].back()) << "the answer is the latest value";
      EXPECT_EQ(probe.pair_position(i), last_statement[key]);
      EXPECT_EQ(probe.query_position(i) - last_statement[key], 200);
      EXPECT_EQ(tokens[probe.query_position(i)], key);
      EXPECT_EQ(tokens[probe.query_position(i) + 1], probe.values[i]);
    }
  }
  // Without rewrites a probe is the one it always was: the statements are the asked pairs.
  const auto plain = make_recall_probe(v, 3, 64, 7);
  EXPECT_EQ(plain.statement_keys, plain.keys);
  EXPECT_EQ(plain.rewrites(), 0);
}

TEST(RecallProbe, key_blind_chance_of_distinct_values_asked_once_is_one_over_the_values_left) {
  RecallVocabulary v;
  for (uint64_t seed = 0; seed < 20; ++seed) {
    const auto probe = make_recall_probe(v, 5, 120, seed, 14, 0, true, {/*distinct_values=*/true, false});
    EXPECT_EQ(std::set<int64_t>(probe.values.begin(), probe.values.end()).size(), 5u);
    const auto chances = key_blind_chances(probe);
    ASSERT_EQ(chances.size(), 5u);
    for (int64_t i = 0; i < 5; ++i) EXPECT_DOUBLE_EQ(chances[i], 1.0 / static_cast<double>(5 - i));
  }
  // One fact needs no key at all.
  EXPECT_EQ(key_blind_chances(make_recall_probe(v, 1, 40, 3)), std::vector<double>{1.0});
}

TEST(RecallProbe, key_blind_chance_counts_repeated_values_and_rules_out_only_answers_in_view) {
  RecallProbe p;  // latest values A A B (keys a b c), asked c, a, b
  const int64_t a = 1, b = 2, c = 3, A = 65, B = 66;
  p.statement_keys = {a, b, c};
  p.statement_values = {A, A, B};
  p.keys = {c, a, b};
  p.values = {B, A, A};
  // c: the best guess A is right 2 times in 3 (here it is not, but that is the chance); then B is ruled
  // out and A is certain.
  EXPECT_EQ(key_blind_chances(p), (std::vector<double>{2.0 / 3.0, 1.0, 1.0}));
  p.answers_hidden = true;  // nothing is ruled out: A stays the best guess for every question
  EXPECT_EQ(key_blind_chances(p), (std::vector<double>{2.0 / 3.0, 2.0 / 3.0, 2.0 / 3.0}));
}

TEST(RecallProbe, distinct_values_need_a_value_for_every_key_in_every_round) {
  RecallVocabulary v;
  v.value_end = v.value_begin + 6;
  v.filler_begin = v.value_end;
  EXPECT_NE(error_of([&] { make_recall_probe(v, 5, 400, 0, 0, 2, false, {true, false}); }).find("need 7 values"),
            std::string::npos);
  for (uint64_t seed = 0; seed < 50; ++seed) {  // 4 keys and 2 rewrites fit 6 values exactly
    const auto probe = make_recall_probe(v, 4, 400, seed, 0, 2, false, {true, false});
    for (int64_t round = 0; round < 3; ++round) {
      const auto first = probe.statement_values.begin() + 4 * round;
      EXPECT_EQ(std::set<int64_t>(first, first + 4).size(), 4u);
    }
  }
}

TEST(RecallProbe, distance_shorter_than_the_pairs_is_refused) {
  EXPECT_NE(error_of([] { make_recall_probe(RecallVocabulary{}, 2, 64, 0, 0, 64); }).find("--rewrites"), std::string::npos);
  EXPECT_NE(error_of([] { make_recall_probe(RecallVocabulary{}, 4, 7, 0); }).find("--distances"), std::string::npos);
  EXPECT_NE(error_of([] { make_recall_probe(RecallVocabulary{}, 65, 1000, 0); }).find("--pairs"), std::string::npos);
}

}  // namespace
}  // namespace swarmt::data
