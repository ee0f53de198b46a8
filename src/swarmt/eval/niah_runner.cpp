#include "swarmt/eval/niah_runner.h"

#include <chrono>
#include <memory>

#include "swarmt/core/error.h"
#include "swarmt/core/memory_usage.h"
#include "swarmt/data/synthetic/essay_text.h"
#include "swarmt/data/synthetic/niah.h"
#include "swarmt/eval/decode.h"
#include "swarmt/eval/ruler_scoring.h"
#include "swarmt/report/progress_bar.h"

namespace swarmt::eval {

Json resources_to_json(const std::vector<LengthResources>& resources) {
  Json out = Json::array();
  for (const auto& r : resources)
    out.push_back({{"length", r.length},
                   {"peak_rss_bytes", r.peak_rss_bytes},
                   {"state_bytes", r.state_bytes},
                   {"seconds_per_sample", r.seconds_per_sample},
                   {"prefill_tokens_per_s", r.prefill_tokens_per_s}});
  return out;
}

EvalRun run_niah(const infer::LoadedModel& model, const NiahRunOptions& options,
                 std::vector<LengthResources>* resources) {
  SWARMT_CHECK_INPUT(!options.variants.empty(), "--variants: no variant given");
  SWARMT_CHECK_INPUT(!options.lengths.empty(), "--lengths: no length given");
  SWARMT_CHECK_INPUT(options.samples > 0, "--samples must be positive");
  for (double d : options.depths) SWARMT_CHECK_INPUT(d >= 0 && d <= 100, "--depths: ", d, " is not in [0, 100]");
  check_context_lengths(model, options.lengths, "--lengths");
  const auto& tok = model.tokenizer();
  data::TokenCounter counter = [&tok](const std::string& text) {
    return static_cast<int64_t>(tok.encode(text, /*add_special_tokens=*/true).size());
  };
  std::shared_ptr<const std::vector<std::string>> essay;
  if (!options.essay_dir.empty())
    essay = std::make_shared<const std::vector<std::string>>(data::split_words(data::load_essay_directory(options.essay_dir)));

  std::vector<std::optional<double>> depths;
  if (options.depths.empty()) depths.push_back(std::nullopt);
  for (double d : options.depths) depths.push_back(d);

  EvalRun run;
  run.metadata = {{"task", "niah"},
                  {"model", model.dir()},
                  {"model_description", model.describe()},
                  {"seed", options.seed},
                  {"samples_per_cell", options.samples},
                  {"decoding", "greedy"},
                  {"haystack_text", options.essay_dir.empty() ? "built-in essay text" : options.essay_dir}};
  const int64_t total = static_cast<int64_t>(options.variants.size() * options.lengths.size() * depths.size()) * options.samples;
  ProgressBarOptions bar_options;
  bar_options.quiet = options.quiet;
  bar_options.unit = "sample";
  ProgressBar bar(total, "niah", bar_options);
  int64_t done = 0;
  double score_sum = 0;

  for (int64_t length : options.lengths) {
    reset_peak_rss();
    LengthResources res;
    res.length = length;
    double seconds = 0, prefill_tokens = 0, prefill_seconds = 0;
    int64_t count = 0;
    for (const auto& variant : options.variants) {
      // RULER keeps 128 tokens free for the answer; a caller who decodes fewer (--max-new-tokens) only
      // needs that much room, which lets short-context models be tested at their training length.
      data::NiahTaskConfig task = data::niah_variant(variant);
      if (options.max_new_tokens > 0) task.tokens_to_generate = options.max_new_tokens;
      data::NiahGenerator generator(task, options.seed, essay);
      for (const auto& depth : depths) {
        auto fit = generator.fit_length(length, counter, depth);
        for (int64_t i = 0; i < options.samples; ++i) {
          auto sample = generator.generate_sample(i, length, fit, counter, depth);
          std::string joined;
          for (size_t a = 0; a < sample.answers.size(); ++a) joined += (a ? ", " : " ") + sample.answers[a];
          const int64_t budget = options.max_new_tokens > 0
                                     ? options.max_new_tokens
                                     : static_cast<int64_t>(tok.encode(joined + ".", false).size()) + 8;
          auto t0 = std::chrono::steady_clock::now();
          Answer answer = greedy_answer(model, sample.prompt, budget);
          double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
          seconds += s;
          prefill_tokens += static_cast<double>(answer.prompt_tokens);
          prefill_seconds += s;
          res.state_bytes = answer.state_bytes;
          ++count;

          EvalSampleResult r;
          r.id = str_cat(variant, "/", length, depth ? str_cat("/d", *depth) : std::string(), "/", sample.id);
          r.variant = variant;
          r.length = length;
          r.depth = sample.depth;
          r.token_count = sample.token_count;
          r.prompt = sample.prompt;
          r.answers = sample.answers;
          r.prediction = answer.text;
          r.score = score_prediction(metric_for_task(variant), answer.text, sample.answers);
          score_sum += r.score;
          run.samples.push_back(std::move(r));
          bar.update(++done, {{"length", std::to_string(length)}, {"mean", format_progress_value(score_sum / done)}});
        }
      }
    }
    res.peak_rss_bytes = peak_rss_since_reset_bytes();
    res.seconds_per_sample = seconds / std::max<int64_t>(1, count);
    res.prefill_tokens_per_s = prefill_tokens / std::max(1e-9, prefill_seconds);
    if (resources) resources->push_back(res);
  }
  bar.finish();
  if (resources) run.metadata["resources"] = resources_to_json(*resources);
  return run;
}

}  // namespace swarmt::eval
