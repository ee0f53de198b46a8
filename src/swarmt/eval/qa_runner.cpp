#include "swarmt/eval/qa_runner.h"

#include <chrono>
#include <filesystem>
#include <map>

#include "swarmt/core/error.h"
#include "swarmt/core/memory_usage.h"
#include "swarmt/data/long_context/long_context_dataset.h"
#include "swarmt/data/long_context/long_context_dataset_source.h"
#include "swarmt/data/source_factory.h"
#include "swarmt/eval/decode.h"
#include "swarmt/report/progress_bar.h"

namespace fs = std::filesystem;

namespace swarmt::eval {

namespace {

int64_t nominal_length(const data::LongContextExample& e) {
  try {
    return data::parse_token_count(e.bucket, "bucket");
  } catch (const Error&) {
    return e.length_tokens;
  }
}

}  // namespace

EvalRun run_qa(const infer::LoadedModel& model, const QaRunOptions& options, std::vector<LengthResources>* resources) {
  SWARMT_CHECK_INPUT(fs::exists(model.dir() + "/tokenizer.json"), model.dir(),
                     ": no tokenizer.json (QA evaluation tokenizes text)");
  const auto text = data::load_text_tokenizer(model.dir());
  auto examples = data::read_long_context_examples(options.data_path);
  SWARMT_CHECK_INPUT(!examples.empty(), options.data_path, ": no examples");
  if (options.max_examples > 0 && static_cast<int64_t>(examples.size()) > options.max_examples)
    examples.resize(static_cast<size_t>(options.max_examples));

  EvalRun run;
  run.metadata = {{"task", "qa"},         {"data", options.data_path}, {"model", model.dir()},
                  {"model_description", model.describe()}, {"decoding", "greedy"}, {"metric", "exact_match"},
                  {"context_limit", options.context_limit}};
  ProgressBarOptions bar_options;
  bar_options.quiet = options.quiet;
  bar_options.unit = "example";
  ProgressBar bar(static_cast<int64_t>(examples.size()), "qa", bar_options);
  std::map<int64_t, LengthResources> by_length;
  std::map<int64_t, std::pair<double, double>> time_tokens;
  std::map<int64_t, int64_t> counts;
  int64_t done = 0;
  for (const auto& e : examples) {
    data::QaTokens qa = data::tokenize_qa(text.tokenizer, text.ids, data::qa_prompt(e.context, e.question), e.answer);
    std::vector<int64_t> prompt(qa.ids.begin(), qa.ids.begin() + static_cast<std::ptrdiff_t>(qa.answer_begin));
    if (options.context_limit > 0 && static_cast<int64_t>(prompt.size()) > options.context_limit) {
      const size_t keep_bos = text.ids.bos >= 0 ? 1 : 0;
      std::vector<int64_t> cut(prompt.begin(), prompt.begin() + static_cast<std::ptrdiff_t>(keep_bos));
      cut.insert(cut.end(), prompt.end() - (options.context_limit - static_cast<int64_t>(keep_bos)), prompt.end());
      prompt = std::move(cut);
    }
    const int64_t answer_tokens = static_cast<int64_t>(qa.ids.size() - qa.answer_begin);
    const int64_t length = nominal_length(e);
    if (!by_length.count(length)) {
      reset_peak_rss();
      by_length[length].length = length;
    }
    auto t0 = std::chrono::steady_clock::now();
    Answer answer = greedy_answer_ids(model, prompt, options.max_new_tokens > 0 ? options.max_new_tokens : answer_tokens + 4);
    time_tokens[length].first += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    time_tokens[length].second += static_cast<double>(answer.prompt_tokens);
    ++counts[length];
    auto& res = by_length[length];
    res.state_bytes = std::max(res.state_bytes, answer.state_bytes);
    res.peak_rss_bytes = std::max(res.peak_rss_bytes, peak_rss_since_reset_bytes());

    EvalSampleResult r;
    r.id = e.id;
    r.variant = e.task + "/" + e.bucket;
    r.length = length;
    r.depth = e.depth;
    r.token_count = static_cast<int64_t>(prompt.size());
    r.prompt = e.question;  // the context is in the data file; the report keeps the question
    r.answers = {e.answer};
    r.prediction = answer.text;
    r.score = data::qa_exact_match(answer.text, e.answer) ? 100.0 : 0.0;
    run.samples.push_back(std::move(r));
    bar.update(++done, {{"length", std::to_string(length)}});
  }
  bar.finish();
  if (resources) {
    for (auto& [length, res] : by_length) {
      res.seconds_per_sample = time_tokens[length].first / static_cast<double>(std::max<int64_t>(1, counts[length]));
      res.prefill_tokens_per_s = time_tokens[length].second / std::max(1e-9, time_tokens[length].first);
      resources->push_back(res);
    }
    run.metadata["resources"] = resources_to_json(*resources);
  }
  return run;
}

}  // namespace swarmt::eval
