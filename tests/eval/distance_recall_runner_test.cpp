// `swarmt eval recall` scores what the model predicts: each question's prediction is the argmax of the
// model's logits at the repeated key, computed here independently by one full-sequence forward of the
// same probe; streaming in chunks (and across a chunk boundary at a question) changes nothing.
#include "swarmt/eval/distance_recall_runner.h"

#include <gtest/gtest.h>

#include <string>

#include "cli/tiny_run.h"
#include "swarmt/core/random.h"
#include "swarmt/data/synthetic/distance_recall.h"
#include "swarmt/infer/loaded_model.h"
#include "test_util.h"

namespace swarmt::eval {
namespace {

struct DistanceRecallRunner : ::testing::Test {
  void SetUp() override {
    testing::write_file(tmp.file("model.json"), testing::tiny_swax_model());  // MS, window 32
    auto r = testing::run_swarmt("model init " + tmp.file("model.json") + " --out " + tmp.file("model") +
                                 " --seed 7");
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  testing::TempDir tmp;
};

TEST_F(DistanceRecallRunner, each_score_is_the_argmax_of_a_full_forward_at_the_question) {
  const auto model = infer::LoadedModel::load(tmp.file("model"));
  RecallRunOptions o;
  o.distances = {6, 45};  // inside and beyond the window of 32
  o.pairs = 2;
  o.samples = 3;
  o.batch = 2;            // a full and a partial batch
  o.chunk = 7;            // chunk boundaries fall between pairs and questions
  o.quiet = true;
  o.seed = 11;
  const EvalRun run = run_distance_recall(model, o);
  ASSERT_EQ(run.samples.size(), o.distances.size() * static_cast<size_t>(o.samples * o.pairs));

  at::NoGradGuard no_grad;
  size_t checked = 0;
  for (int64_t d : o.distances) {
    for (int64_t p = 0; p < o.samples; ++p) {
      // The runner's documented draw: probe p of distance d from mix_key(mix_key(seed, d), p).
      const auto probe = data::make_recall_probe(
          o.vocabulary, o.pairs, d, mix_key(mix_key(o.seed, static_cast<uint64_t>(d)), static_cast<uint64_t>(p)));
      const auto tokens = probe.tokens(0, probe.length());
      auto logits = model.forward(at::tensor(tokens, at::TensorOptions().dtype(at::kLong)).view({1, -1}))[0];
      for (int64_t i = 0; i < o.pairs; ++i) {
        const auto& s = run.samples.at(checked++);
        ASSERT_EQ(s.length, d);
        ASSERT_EQ(s.details.at("query_position").get<int64_t>(), probe.query_position(i));
        ASSERT_EQ(s.details.at("key").get<int64_t>(), probe.keys[static_cast<size_t>(i)]);
        const int64_t value = probe.values[static_cast<size_t>(i)];
        ASSERT_EQ(s.details.at("value").get<int64_t>(), value);
        const int64_t predicted = s.details.at("predicted").get<int64_t>();
        // Streaming and the full forward sum in different orders: the prediction must be the full
        // forward's argmax, or tie with it to float precision.
        auto row = logits[probe.query_position(i)];
        const double best = row.max().item<double>();
        EXPECT_NEAR(row[predicted].item<double>(), best, 1e-4) << s.id;
        EXPECT_EQ(s.score, predicted == value ? 100.0 : 0.0) << s.id;
      }
    }
  }
}

TEST_F(DistanceRecallRunner, chunk_size_does_not_change_any_prediction) {
  const auto model = infer::LoadedModel::load(tmp.file("model"));
  RecallRunOptions o;
  o.distances = {40};
  o.pairs = 3;
  o.samples = 4;
  o.quiet = true;
  o.chunk = 512;
  const EvalRun whole = run_distance_recall(model, o);
  o.chunk = 5;
  const EvalRun chunked = run_distance_recall(model, o);
  ASSERT_EQ(whole.samples.size(), chunked.samples.size());
  for (size_t i = 0; i < whole.samples.size(); ++i)
    EXPECT_EQ(whole.samples[i].details.at("predicted"), chunked.samples[i].details.at("predicted")) << i;
}

// The key-blind floor beside each accuracy: each question's chance for an answerer that does not bind keys
// to values, and per distance their mean. Distinct values asked once in a random order give
// (1/5)(1/5 + 1/4 + 1/3 + 1/2 + 1) = 45.67% with the answers in view, 1/5 with them hidden; with values
// drawn with replacement the most frequent one is right more often.
TEST_F(DistanceRecallRunner, key_blind_floor_is_reported_per_question_and_per_distance) {
  const auto model = infer::LoadedModel::load(tmp.file("model"));
  RecallRunOptions o;
  o.distances = {20, 30};
  o.pairs = 5;
  o.samples = 4;
  o.quiet = true;
  o.shuffle_questions = true;
  o.draw.distinct_values = true;
  const auto floor_at = [](const EvalRun& run, int64_t d) {
    return run.metadata["key_blind_percent"][std::to_string(d)].get<double>();
  };
  const EvalRun shown = run_distance_recall(model, o);
  for (int64_t d : o.distances)
    EXPECT_NEAR(floor_at(shown, d), 100.0 * (1.0 / 5 + 1.0 / 4 + 1.0 / 3 + 1.0 / 2 + 1.0) / 5, 1e-9);
  EXPECT_DOUBLE_EQ(shown.samples.front().details.at("key_blind").get<double>(), 0.2) << "the first question: 1 in 5";

  o.draw.hidden_answers = true;
  const EvalRun hidden = run_distance_recall(model, o);
  for (int64_t d : o.distances) EXPECT_NEAR(floor_at(hidden, d), 20.0, 1e-9);

  o.draw = {};
  o.samples = 50;
  const EvalRun repeated = run_distance_recall(model, o);
  for (int64_t d : o.distances) {
    double sum = 0, count = 0;
    for (const auto& s : repeated.samples)
      if (s.length == d) {
        sum += s.details.at("key_blind").get<double>();
        ++count;
      }
    EXPECT_NEAR(floor_at(repeated, d), 100.0 * sum / count, 1e-9);
    EXPECT_GT(floor_at(repeated, d), floor_at(shown, d)) << "repeated values: the most frequent one is a better guess";
  }
}

}  // namespace
}  // namespace swarmt::eval
