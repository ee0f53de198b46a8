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

}  // namespace
}  // namespace swarmt::eval
