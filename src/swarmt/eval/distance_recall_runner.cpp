#include "swarmt/eval/distance_recall_runner.h"

#include <algorithm>
#include <chrono>

#include "swarmt/core/error.h"
#include "swarmt/core/memory_usage.h"
#include "swarmt/core/random.h"
#include "swarmt/eval/decode.h"
#include "swarmt/infer/token_stream.h"
#include "swarmt/report/progress_bar.h"

namespace swarmt::eval {
namespace {

// Replaces the state of every recurrent layer with a fresh one (attention rings are kept).
void forget_recurrent_memory(models::CausalLM& lm, models::ModelState& state, int64_t batch) {
  for (int64_t i = 0; i < lm.num_layers(); ++i)
    if (lm.layer(i).is_recurrent()) state.layers[static_cast<size_t>(i)] = lm.layer(i).new_state(batch, lm.dtype(), lm.device());
}

// Chunk boundaries of [0, length): every `chunk` tokens, plus `cut` (when inside) so that a state reset
// can happen exactly there.
std::vector<int64_t> chunk_starts(int64_t length, int64_t chunk, int64_t cut) {
  std::vector<int64_t> starts;
  for (int64_t s = 0; s < length; s += chunk) starts.push_back(s);
  if (cut > 0 && cut < length && std::find(starts.begin(), starts.end(), cut) == starts.end()) {
    starts.push_back(cut);
    std::sort(starts.begin(), starts.end());
  }
  return starts;
}

}  // namespace

EvalRun run_distance_recall(const infer::LoadedModel& model, const RecallRunOptions& o,
                            std::vector<LengthResources>* resources) {
  SWARMT_CHECK_INPUT(!o.distances.empty(), "--distances: no value given");
  SWARMT_CHECK_INPUT(o.samples >= 1, "--samples must be at least 1 (got ", o.samples, ")");
  SWARMT_CHECK_INPUT(o.batch >= 1 && o.batch <= 4096, "--batch must be in [1, 4096] (got ", o.batch, ")");
  SWARMT_CHECK_INPUT(o.chunk >= 1, "--prefill-chunk must be at least 1 (got ", o.chunk, ")");
  auto lm = model.model();
  const int64_t vocab = lm->vocab_size();
  SWARMT_CHECK_INPUT(o.vocabulary.filler_end <= vocab && o.vocabulary.value_end <= vocab && o.vocabulary.key_end <= vocab,
                     "recall: the task's ids (up to ", std::max({o.vocabulary.key_end, o.vocabulary.value_end, o.vocabulary.filler_end}) - 1,
                     ") do not fit the model's vocabulary of ", vocab);
  std::vector<int64_t> lengths;
  for (int64_t d : o.distances)
    lengths.push_back(make_recall_probe(o.vocabulary, o.pairs, d, 0, o.gap, o.rewrites, false, o.draw).length());
  check_context_lengths(model, lengths, "--distances");  // every distance first: state growth, memory
  const int64_t window = lm->inference_window();
  if (o.forget_beyond_window) {
    bool recurrent = false;
    for (int64_t i = 0; i < lm->num_layers(); ++i) recurrent = recurrent || lm->layer(i).is_recurrent();
    SWARMT_CHECK_INPUT(recurrent && window > 0, "--forget-beyond-window: ", model.dir(),
                       " needs both recurrent (mLSTM / GDN) and sliding-window layers");
    SWARMT_CHECK_INPUT(lm->new_state(1).layers.size() == static_cast<size_t>(lm->num_layers()), "--forget-beyond-window: ",
                       model.dir(), " keeps its streaming state its own way (ARMT); the control applies to SWAX models");
  }

  EvalRun run;
  run.metadata = {{"task", "recall"}, {"model", model.dir()}, {"model_description", model.describe()},
                  {"seed", o.seed}, {"pairs", o.pairs}, {"gap", o.gap}, {"rewrites", o.rewrites},
                  {"shuffle_questions", o.shuffle_questions}, {"distinct_values", o.draw.distinct_values},
                  {"hidden_answers", o.draw.hidden_answers}, {"samples_per_distance", o.samples},
                  {"questions_per_distance", o.samples * o.pairs}, {"window", window},
                  {"forget_beyond_window", o.forget_beyond_window},
                  {"chance_percent", 100.0 / static_cast<double>(o.vocabulary.num_values())},
                  {"keys", {o.vocabulary.key_begin, o.vocabulary.key_end}},
                  {"values", {o.vocabulary.value_begin, o.vocabulary.value_end}},
                  {"filler", {o.vocabulary.filler_begin, o.vocabulary.filler_end}}, {"decoding", "argmax"}};
  ProgressBarOptions bar_options;
  bar_options.quiet = o.quiet;
  bar_options.unit = "probe";
  ProgressBar bar(static_cast<int64_t>(o.distances.size()) * o.samples, "recall", bar_options);
  int64_t done = 0;
  at::NoGradGuard no_grad;
  for (int64_t distance : o.distances) {
    reset_peak_rss();
    LengthResources res;
    res.length = distance;
    double seconds = 0, tokens = 0, key_blind_sum = 0;
    for (int64_t first = 0; first < o.samples; first += o.batch) {
      const int64_t B = std::min(o.batch, o.samples - first);
      std::vector<data::RecallProbe> probes;
      for (int64_t b = 0; b < B; ++b)
        probes.push_back(data::make_recall_probe(o.vocabulary, o.pairs, distance,
                                                 mix_key(mix_key(o.seed, static_cast<uint64_t>(distance)), static_cast<uint64_t>(first + b)), o.gap, o.rewrites,
                                                 o.shuffle_questions, o.draw));
      const data::RecallProbe& shape = probes.front();  // every probe of a distance has the same layout
      const int64_t length = shape.length();
      const int64_t cut = o.forget_beyond_window ? shape.first_query_position() - window : -1;
      auto t0 = std::chrono::steady_clock::now();
      auto state = lm->new_state(B);
      infer::check_context_fits(state.bytes(), state.bytes_after(length), length, "a recall probe");
      std::vector<std::vector<int64_t>> predicted(static_cast<size_t>(B), std::vector<int64_t>(static_cast<size_t>(o.pairs), -1));
      const auto starts = chunk_starts(length, o.chunk, cut);
      for (size_t c = 0; c < starts.size(); ++c) {
        const int64_t begin = starts[c], end = c + 1 < starts.size() ? starts[c + 1] : length;
        if (begin == cut) forget_recurrent_memory(*lm, state, B);
        std::vector<int64_t> ids;
        ids.reserve(static_cast<size_t>(B * (end - begin)));
        for (const auto& probe : probes)
          for (int64_t t = begin; t < end; ++t) ids.push_back(probe.token_at(t));
        auto input = at::tensor(ids, at::TensorOptions().dtype(at::kLong)).view({B, end - begin});
        auto hidden = lm->forward_stateful_hidden(input, state);  // (B, n, d)
        // The head only at the questions inside this chunk.
        std::vector<int64_t> offsets, pairs;
        for (int64_t i = 0; i < o.pairs; ++i) {
          const int64_t q = shape.query_position(i);
          if (q >= begin && q < end) {
            offsets.push_back(q - begin);
            pairs.push_back(i);
          }
        }
        if (offsets.empty()) continue;
        auto index = at::tensor(offsets, at::TensorOptions().dtype(at::kLong)).to(hidden.device());
        auto logits = lm->head(hidden.index_select(1, index));  // (B, q, V)
        auto argmax = logits.argmax(-1).to(at::kCPU).contiguous();
        auto acc = argmax.accessor<int64_t, 2>();
        for (int64_t b = 0; b < B; ++b)
          for (size_t j = 0; j < pairs.size(); ++j)
            predicted[static_cast<size_t>(b)][static_cast<size_t>(pairs[j])] = acc[b][static_cast<int64_t>(j)];
      }
      seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      tokens += static_cast<double>(B * length);
      res.state_bytes = state.bytes() / B;
      for (int64_t b = 0; b < B; ++b) {
        const auto& probe = probes[static_cast<size_t>(b)];
        const auto key_blind = data::key_blind_chances(probe);
        for (int64_t i = 0; i < o.pairs; ++i) {
          const int64_t value = probe.values[static_cast<size_t>(i)];
          const int64_t guess = predicted[static_cast<size_t>(b)][static_cast<size_t>(i)];
          SWARMT_CHECK(guess >= 0, "question ", i, " of a probe was never scored");
          EvalSampleResult r;
          r.id = str_cat("recall/", distance, "/", first + b, "/", i);
          r.variant = o.rewrites > 0 ? str_cat("recall_k", o.pairs, "_r", o.rewrites) : str_cat("recall_k", o.pairs);
          r.length = distance;
          r.token_count = length;
          r.answers = {std::to_string(value)};
          r.prediction = std::to_string(guess);
          r.score = guess == value ? 100.0 : 0.0;
          r.details = {{"key", probe.keys[static_cast<size_t>(i)]}, {"value", value}, {"predicted", guess},
                       {"probe", first + b}, {"pair", i}, {"query_position", probe.query_position(i)},
                       {"stated", probe.asked_from.empty() ? i : probe.asked_from[static_cast<size_t>(i)]},
                       {"distance", probe.question_distance(i)}, {"key_blind", key_blind[static_cast<size_t>(i)]}};
          key_blind_sum += key_blind[static_cast<size_t>(i)];
          run.samples.push_back(std::move(r));
        }
      }
      done += B;
      bar.update(done, {{"distance", std::to_string(distance)}});
    }
    run.metadata["key_blind_percent"][std::to_string(distance)] =
        100.0 * key_blind_sum / static_cast<double>(o.samples * o.pairs);
    res.peak_rss_bytes = peak_rss_since_reset_bytes();
    res.seconds_per_sample = seconds / static_cast<double>(o.samples);
    res.prefill_tokens_per_s = tokens / std::max(1e-9, seconds);
    if (resources) resources->push_back(res);
  }
  bar.finish();
  if (resources) run.metadata["resources"] = resources_to_json(*resources);
  return run;
}

}  // namespace swarmt::eval
