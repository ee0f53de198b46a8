#include "swarmt/eval/recall_runners.h"

#include <chrono>

#include "swarmt/core/error.h"
#include "swarmt/core/memory_usage.h"
#include "swarmt/core/random.h"
#include "swarmt/data/synthetic/synthetic_tasks.h"
#include "swarmt/eval/decode.h"
#include "swarmt/eval/ruler_scoring.h"
#include "swarmt/report/progress_bar.h"

namespace swarmt::eval {

EvalRun run_passkey(const infer::LoadedModel& model, const PasskeyRunOptions& options,
                    std::vector<LengthResources>* resources) {
  SWARMT_CHECK_INPUT(!options.lengths.empty() && options.samples > 0, "passkey: give lengths and a positive --samples");
  check_context_lengths(model, options.lengths, "--lengths");
  const auto& tok = model.tokenizer();
  data::TokenCounter counter = [&tok](const std::string& text) {
    return static_cast<int64_t>(tok.encode(text, true).size());
  };
  std::vector<std::optional<double>> depths;
  if (options.depths.empty()) depths.push_back(std::nullopt);
  for (double d : options.depths) {
    SWARMT_CHECK_INPUT(d >= 0 && d <= 100, "--depths: ", d, " is not in [0, 100]");
    depths.push_back(d);
  }
  EvalRun run;
  run.metadata = {{"task", "passkey"}, {"model", model.dir()}, {"model_description", model.describe()},
                  {"seed", options.seed}, {"samples_per_cell", options.samples}, {"decoding", "greedy"}};
  ProgressBarOptions bar_options;
  bar_options.quiet = options.quiet;
  bar_options.unit = "sample";
  ProgressBar bar(static_cast<int64_t>(options.lengths.size() * depths.size()) * options.samples, "passkey", bar_options);
  int64_t done = 0;
  for (int64_t length : options.lengths) {
    reset_peak_rss();
    LengthResources res;
    res.length = length;
    double seconds = 0, tokens = 0;
    int64_t count = 0;
    for (const auto& depth : depths) {
      for (int64_t i = 0; i < options.samples; ++i) {
        const uint64_t seed = mix_key(mix_key(options.seed, static_cast<uint64_t>(length)), static_cast<uint64_t>(i));
        data::PasskeyConfig config;
        config.depth_percent = depth ? *depth : uniform_from_key(mix_key(seed, 1)) * 100.0;
        auto example = data::generate_passkey_for_length(config, length, /*tokens_to_generate=*/16, counter, seed);
        auto t0 = std::chrono::steady_clock::now();
        Answer answer = greedy_answer(model, example.prompt, static_cast<int64_t>(tok.encode(" " + example.answer, false).size()) + 4);
        seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        tokens += static_cast<double>(answer.prompt_tokens);
        res.state_bytes = answer.state_bytes;
        ++count;
        EvalSampleResult r;
        r.id = str_cat("passkey/", length, "/", i, depth ? str_cat("/d", *depth) : std::string());
        r.variant = "passkey";
        r.length = length;
        r.depth = config.depth_percent;
        r.token_count = example.token_count;
        r.prompt = example.prompt;
        r.answers = {example.answer};
        r.prediction = answer.text;
        r.score = score_prediction(RulerMetric::StringMatchAll, answer.text, r.answers);
        run.samples.push_back(std::move(r));
        bar.update(++done, {{"length", std::to_string(length)}});
      }
    }
    res.peak_rss_bytes = peak_rss_since_reset_bytes();
    res.seconds_per_sample = seconds / std::max<int64_t>(1, count);
    res.prefill_tokens_per_s = tokens / std::max(1e-9, seconds);
    if (resources) resources->push_back(res);
  }
  bar.finish();
  if (resources) run.metadata["resources"] = resources_to_json(*resources);
  return run;
}

EvalRun run_mqar(const infer::LoadedModel& model, const MqarRunOptions& options) {
  const int64_t vocab = model.model()->vocab_size();
  SWARMT_CHECK_INPUT(options.vocab_begin >= 0 && options.vocab_end <= vocab && options.vocab_end - options.vocab_begin >= 8,
                     "mqar: the id range [", options.vocab_begin, ", ", options.vocab_end,
                     ") must hold at least 8 ids inside the model vocabulary (", vocab, ")");
  SWARMT_CHECK_INPUT(options.samples > 0, "--samples must be positive");
  check_context_lengths(model, options.lengths, "--lengths");
  EvalRun run;
  run.metadata = {{"task", "mqar"}, {"model", model.dir()}, {"model_description", model.describe()},
                  {"seed", options.seed}, {"samples_per_cell", options.samples},
                  {"vocab_range", {options.vocab_begin, options.vocab_end}}};
  ProgressBarOptions bar_options;
  bar_options.quiet = options.quiet;
  bar_options.unit = "sample";
  ProgressBar bar(static_cast<int64_t>(options.lengths.size() * options.num_kv_pairs.size()) * options.samples, "mqar",
                  bar_options);
  int64_t done = 0;
  for (int64_t length : options.lengths) {
    for (int64_t pairs : options.num_kv_pairs) {
      auto config = data::MqarConfig::zoology(options.vocab_end - options.vocab_begin, length, pairs);
      for (int64_t* id : {&config.key_begin, &config.key_end, &config.value_begin, &config.value_end,
                          &config.noise_begin, &config.noise_end, &config.filler_token})
        *id += options.vocab_begin;
      data::validate_mqar_config(config);
      for (int64_t i = 0; i < options.samples; ++i) {
        auto example = data::generate_mqar_example(config, mix_key(mix_key(options.seed, length * 1000 + pairs), i));
        auto tokens = at::tensor(example.tokens, at::TensorOptions().dtype(at::kLong));
        int64_t correct = 0;
        stream_logits(model, tokens, options.chunk, [&](int64_t offset, const at::Tensor& logits) {
          auto predicted = logits.argmax(-1);
          for (int64_t q : example.query_positions)
            if (q >= offset && q < offset + logits.size(0))
              correct += predicted[q - offset].item<int64_t>() == example.targets[q];
        });
        EvalSampleResult r;
        r.id = str_cat("mqar_kv", pairs, "/", length, "/", i);
        r.variant = str_cat("mqar_kv", pairs);
        r.length = length;
        r.token_count = length;
        r.score = 100.0 * static_cast<double>(correct) / static_cast<double>(example.query_positions.size());
        r.answers = {str_cat(example.query_positions.size(), " queries")};
        r.prediction = str_cat(correct, " correct");
        run.samples.push_back(std::move(r));
        bar.update(++done, {{"length", std::to_string(length)}, {"pairs", std::to_string(pairs)}});
      }
    }
  }
  bar.finish();
  return run;
}

}  // namespace swarmt::eval
