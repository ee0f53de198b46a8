#include "swarmt/eval/perplexity.h"

#include <cmath>
#include <filesystem>

#include "swarmt/core/atomic_file.h"
#include "swarmt/core/error.h"
#include "swarmt/core/random.h"
#include "swarmt/data/corpus/token_file.h"
#include "swarmt/eval/decode.h"
#include "swarmt/report/markdown_table.h"
#include "swarmt/report/progress_bar.h"
#include "swarmt/report/svg_plot.h"

namespace swarmt::eval {

Json PerplexityResult::to_json() const {
  Json b = Json::array();
  for (const auto& bucket : buckets)
    b.push_back({{"begin", bucket.begin}, {"end", bucket.end}, {"mean_loss", bucket.mean_loss},
                 {"perplexity", std::exp(bucket.mean_loss)}, {"tokens", bucket.tokens}});
  return Json{{"buckets", b}, {"mean_loss", mean_loss}, {"perplexity", std::exp(mean_loss)}, {"tokens", tokens}};
}

PerplexityResult run_perplexity(const infer::LoadedModel& model, const PerplexityOptions& o) {
  SWARMT_CHECK_INPUT(o.length >= 2 && o.windows > 0 && o.chunk > 0, "ppl: --length >= 2, --windows > 0, --chunk > 0");
  check_context_lengths(model, {o.length}, "--length");
  auto file = data::TokenFile::open(o.token_file);
  SWARMT_CHECK_INPUT(file.num_tokens() > o.length, o.token_file, ": has ", file.num_tokens(),
                     " tokens, fewer than one window of ", o.length + 1);
  SWARMT_CHECK_INPUT(file.vocab_size() <= model.model()->vocab_size(), o.token_file, ": vocabulary (", file.vocab_size(),
                     ") is larger than the model's (", model.model()->vocab_size(), ")");
  file.validate_tokens();  // ids beyond the sidecar's vocab_size would fail inside the embedding, naming nothing
  // Bucket boundaries.
  std::vector<int64_t> edges{0};
  if (o.bucket_size > 0) {
    for (int64_t e = o.bucket_size; e < o.length; e += o.bucket_size) edges.push_back(e);
  } else {
    for (int64_t e = 1; e < o.length; e *= 2) edges.push_back(e);
  }
  edges.push_back(o.length);
  std::vector<double> sums(edges.size() - 1, 0.0);
  std::vector<int64_t> counts(edges.size() - 1, 0);

  ProgressBarOptions bar_options;
  bar_options.quiet = o.quiet;
  bar_options.unit = "window";
  ProgressBar bar(o.windows, "ppl", bar_options);
  const uint64_t choices = static_cast<uint64_t>(file.num_tokens() - o.length);
  for (int64_t w = 0; w < o.windows; ++w) {
    const int64_t start = static_cast<int64_t>(mix_key(o.seed, static_cast<uint64_t>(w)) % choices);
    std::vector<int64_t> ids(o.length + 1);
    for (int64_t t = 0; t <= o.length; ++t) ids[t] = file.token(start + t);
    auto tokens = at::tensor(std::vector<int64_t>(ids.begin(), ids.end() - 1), at::TensorOptions().dtype(at::kLong));
    auto targets = at::tensor(std::vector<int64_t>(ids.begin() + 1, ids.end()), at::TensorOptions().dtype(at::kLong));
    stream_logits(model, tokens, o.chunk, [&](int64_t offset, const at::Tensor& logits) {
      auto loss = at::cross_entropy_loss(logits.to(at::kFloat), targets.narrow(0, offset, logits.size(0)).to(logits.device()),
                                         {}, at::Reduction::None)
                      .to(at::kDouble)
                      .cpu();
      const double* l = loss.data_ptr<double>();
      size_t b = 0;
      for (int64_t i = 0; i < loss.size(0); ++i) {
        const int64_t pos = offset + i;
        while (pos >= edges[b + 1]) ++b;
        sums[b] += l[i];
        counts[b] += 1;
      }
    });
    bar.update(w + 1);
  }
  bar.finish();
  PerplexityResult result;
  double total = 0;
  for (size_t b = 0; b + 1 < edges.size(); ++b) {
    if (counts[b] == 0) continue;
    result.buckets.push_back({edges[b], edges[b + 1], sums[b] / counts[b], counts[b]});
    total += sums[b];
    result.tokens += counts[b];
  }
  result.mean_loss = total / std::max<int64_t>(1, result.tokens);
  return result;
}

void write_perplexity_report(const std::string& dir, const PerplexityResult& result, const Json& metadata) {
  std::filesystem::create_directories(dir);
  Json out = result.to_json();
  out["metadata"] = metadata;
  write_file_atomically(dir + "/results.json", out.dump(2) + "\n");
  MarkdownTable table({"positions", "tokens", "loss (nats)", "perplexity"});
  for (const auto& b : result.buckets)
    table.add_row({str_cat("[", b.begin, ", ", b.end, ")"), std::to_string(b.tokens), format_fixed(b.mean_loss, 4),
                   format_fixed(std::exp(b.mean_loss), 3)});
  std::string md = "# Loss by position\n\n" + table.render() + "\nMean loss " + format_fixed(result.mean_loss, 4) +
                   " nats over " + std::to_string(result.tokens) + " tokens.\n";
  write_file_atomically(dir + "/summary.md", md);
  LinePlot plot;
  plot.title = "Loss by position";
  plot.x_label = "position (bucket end)";
  plot.y_label = "mean loss (nats)";
  LineSeries series;
  series.name = "loss";
  for (const auto& b : result.buckets) {
    series.x.push_back(static_cast<double>(b.end));
    series.y.push_back(b.mean_loss);
  }
  plot.series.push_back(series);
  write_file_atomically(dir + "/loss_by_position.svg", render_line_plot(plot));
}

}  // namespace swarmt::eval
