// `swarmt data`: training data.
//   swarmt data prepare --tokenizer byte|DIR --input FILE... --out PREFIX [--format txt|jsonl|auto]
//                       [--field text] [--split-paragraphs] [--validation-fraction 0.01] [--add-eos] [--seed 0]
//   swarmt data synth TASK --tokenizer byte|DIR --out FILE.jsonl [--samples N]
//                     [--lengths 1k,4k | --buckets in:2048-8192,long:16k | --segment-length 1024]
//                     [--corpus DIR] [--seed S] [--depths 0,50,100] [--variant qa1|qa2|mixed]
//                     [--distractors K] [--templates T,...] [--rewrites R] [--projects N] [--write-projects DIR]
// TASK: long_qa | type_prediction | facts_in_noise (see docs/data.md).
#include <cstdio>
#include <iomanip>
#include <iostream>
#include <memory>
#include <sstream>

#include "swarmt/cli/command.h"
#include "swarmt/core/error.h"
#include "swarmt/core/output_directory.h"
#include "swarmt/data/corpus/text_corpus_prepare.h"
#include "swarmt/data/long_context/long_context_dataset_synth.h"
#include "swarmt/data/source_factory.h"
#include "swarmt/data/synthetic/long_qa.h"
#include "swarmt/data/synthetic/type_prediction_projects.h"
#include "swarmt/report/progress_bar.h"

namespace swarmt::cli {
namespace {

std::string fixed(double value, int digits) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(digits) << value;
  return os.str();
}

std::vector<double> parse_depths(const std::string& text) {
  std::vector<double> depths;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    char* end = nullptr;
    const double d = std::strtod(item.c_str(), &end);
    SWARMT_CHECK_INPUT(!item.empty() && end && *end == '\0' && d >= 0 && d <= 100, "--depths: '", item,
                       "' is not a percentage in [0, 100]");
    depths.push_back(d);
  }
  return depths;
}

// ---------------------------------------------------------------------------------------------------

struct PrepareCli {
  std::string tokenizer = "byte";
  data::PrepareOptions options;
};

void register_data_prepare(CLI::App& group, const GlobalOptions& globals, CommandList& commands) {
  auto cli = std::make_shared<PrepareCli>();
  auto& o = cli->options;
  CLI::App* cmd = group.add_subcommand("prepare", "Tokenize .txt/.jsonl files into token files (train + validation split)");
  cmd->add_option("--tokenizer", cli->tokenizer, "\"byte\" or a directory with tokenizer.json")->capture_default_str();
  cmd->add_option("--input", o.inputs, "Input files (.txt: one document per file or paragraph; .jsonl: one per line)")
      ->required();
  cmd->add_option("--out", o.out_prefix, "Output prefix: PREFIX.tokens/.json and PREFIX-validation.tokens/.json")
      ->required();
  cmd->add_option("--format", o.format, "txt, jsonl or auto (by extension)")->capture_default_str();
  cmd->add_option("--field", o.field, "JSONL field holding the text")->capture_default_str();
  cmd->add_flag("--split-paragraphs", o.split_paragraphs, "txt: one document per blank-line separated block");
  cmd->add_option("--validation-fraction", o.validation_fraction, "Share of documents held out for validation")
      ->capture_default_str();
  cmd->add_flag("--add-eos", o.add_eos, "Append the tokenizer's eos token to every document");
  cmd->add_option("--seed", o.seed, "Seed of the validation split")->capture_default_str();
  const GlobalOptions* g = &globals;
  commands.push_back({cmd, [cli, g]() -> int {
                        auto tokenizer = data::load_text_tokenizer(cli->tokenizer);
                        cli->options.tokenizer_spec = cli->tokenizer;
                        ProgressBarOptions bar_options;
                        bar_options.quiet = g->quiet;
                        bar_options.unit = "doc";
                        ProgressBar bar(0, "prepare", bar_options);
                        auto summary = data::prepare_token_files(cli->options, tokenizer, [&](const data::PrepareSummary& s) {
                          const double tokens = static_cast<double>(s.tokens + s.validation_tokens);
                          bar.update(s.documents + s.validation_documents,
                                     {{"tokens", std::to_string(s.tokens + s.validation_tokens)},
                                      {"tok/s", fixed(s.seconds > 0 ? tokens / s.seconds : 0, 0)}});
                        });
                        bar.finish();
                        const int64_t all_tokens = summary.tokens + summary.validation_tokens;
                        std::cout << "documents: " << summary.documents << " train, " << summary.validation_documents
                                  << " validation, " << summary.skipped_documents << " empty skipped\n"
                                  << "tokens: " << summary.tokens << " train, " << summary.validation_tokens
                                  << " validation\n"
                                  << "time: " << fixed(summary.seconds, 2) << " s, "
                                  << fixed(summary.seconds > 0 ? static_cast<double>(all_tokens) / summary.seconds : 0, 0)
                                  << " tokens/s, "
                                  << fixed(summary.seconds > 0 ? static_cast<double>(summary.input_bytes) / 1e6 / summary.seconds : 0, 2)
                                  << " MB/s\n"
                                  << "wrote " << cli->options.out_prefix << ".tokens/.json";
                        if (summary.wrote_validation) std::cout << " and " << cli->options.out_prefix << "-validation.tokens/.json";
                        else if (cli->options.validation_fraction > 0) std::cout << " (no document fell in the validation split)";
                        std::cout << std::endl;
                        return 0;
                      }});
}

// ---------------------------------------------------------------------------------------------------

struct SynthCli {
  std::string tokenizer = "byte";
  std::string out;
  std::string lengths, buckets, depths, write_projects;
  int64_t segment_length = 1024;
  data::SynthOptions options;
};

void register_data_synth(CLI::App& group, const GlobalOptions& globals, CommandList& commands) {
  auto cli = std::make_shared<SynthCli>();
  auto& o = cli->options;
  CLI::App* cmd = group.add_subcommand(
      "synth", "Write a synthetic long-context dataset (long_qa, type_prediction, facts_in_noise) as JSONL");
  cmd->add_option("task", o.task, "long_qa | type_prediction | facts_in_noise")->required();
  cmd->add_option("--tokenizer", cli->tokenizer, "\"byte\" or a directory with tokenizer.json (lengths are in its tokens)")
      ->capture_default_str();
  cmd->add_option("--out", cli->out, "Output .jsonl file")->required();
  cmd->add_option("--samples", o.samples_per_bucket, "Examples per length bucket")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  auto* lengths = cmd->add_option("--lengths", cli->lengths, "Fixed lengths, one bucket each: 1k,4k,16384");
  auto* buckets = cmd->add_option("--buckets", cli->buckets, "Named buckets NAME:LEN or NAME:MIN-MAX: in:2k-8k,long:16k-32k,ood:64k");
  auto* segment = cmd->add_option("--segment-length", cli->segment_length,
                                  "Default buckets from a segment of S tokens: in 2S-8S, long 16S-32S, ood 64S")
                      ->capture_default_str();
  lengths->excludes(buckets)->excludes(segment);
  buckets->excludes(segment);
  cmd->add_option("--corpus", o.corpus,
                  "long_qa/facts_in_noise: directory of .txt files; type_prediction: directory of Python projects"
                  " (default: built-in text / generated projects)");
  cmd->add_option("--seed", o.seed, "Seed (same seed, same file)")->capture_default_str();
  cmd->add_option("--depths", cli->depths, "Evidence depths in percent, cycled over the examples (default: random)");
  cmd->add_option("--variant", o.variant, "facts_in_noise: qa1, qa2 or mixed")->capture_default_str();
  cmd->add_option("--distractors", o.distractors, "long_qa: distractor facts per example")->capture_default_str();
  cmd->add_option("--templates", o.templates, "long_qa: fact templates to draw from (default: all)")
      ->delimiter(',')
      ->check(CLI::IsMember(data::long_qa_template_names()));
  cmd->add_option("--rewrites", o.rewrites,
                  "long_qa: earlier values of the asked fact that later statements override (the answer is the latest;"
                  " templates that can be rewritten: code)")
      ->check(CLI::Range(0, 8))
      ->capture_default_str();
  cmd->add_option("--projects", o.synthetic_projects, "type_prediction: number of generated projects")->capture_default_str();
  cmd->add_option("--write-projects", cli->write_projects,
                  "type_prediction: also write the generated Python projects under this directory");
  const GlobalOptions* g = &globals;
  commands.push_back({cmd, [cli, g]() -> int {
                        auto& o = cli->options;
                        if (!cli->lengths.empty()) o.buckets = data::parse_length_list(cli->lengths, "--lengths");
                        else if (!cli->buckets.empty()) o.buckets = data::parse_length_buckets(cli->buckets, "--buckets");
                        else o.buckets = data::default_length_buckets(cli->segment_length);
                        if (!cli->depths.empty()) o.depths = parse_depths(cli->depths);
                        auto tokenizer = data::load_text_tokenizer(cli->tokenizer);
                        auto counter = data::make_qa_length_counter(tokenizer.tokenizer, tokenizer.ids);
                        auto task = data::make_long_context_task(o, counter);
                        if (!cli->write_projects.empty()) {
                          SWARMT_CHECK_INPUT(o.task == "type_prediction" && o.corpus.empty(),
                                             "--write-projects applies to type_prediction without --corpus");
                          // The project tree appears complete or not at all (core/output_directory.h).
                          OutputDirectory projects(cli->write_projects, "--write-projects");
                          data::write_python_projects(data::type_prediction_projects(o), projects.path());
                          projects.commit();
                        }
                        ProgressBarOptions bar_options;
                        bar_options.quiet = g->quiet;
                        bar_options.unit = "ex";
                        ProgressBar bar(static_cast<int64_t>(o.buckets.size()) * o.samples_per_bucket, "synth", bar_options);
                        auto summary = data::write_long_context_dataset(o, *task, cli->out,
                                                                        [&](int64_t done, int64_t) { bar.update(done); });
                        bar.finish();
                        std::cout << "bucket  examples  target tokens     length_tokens (min / mean / max)  mean shortfall\n";
                        for (size_t b = 0; b < summary.buckets.size(); ++b) {
                          const auto& s = summary.buckets[b];
                          const auto& range = o.buckets[b];
                          const std::string target = range.min_tokens == range.max_tokens
                                                         ? std::to_string(range.min_tokens)
                                                         : std::to_string(range.min_tokens) + "-" + std::to_string(range.max_tokens);
                          std::printf("%-7s %8lld  %-16s  %7lld / %9.1f / %7lld       %8.1f\n", s.name.c_str(),
                                      static_cast<long long>(s.examples), target.c_str(),
                                      static_cast<long long>(s.min_length), s.mean_length,
                                      static_cast<long long>(s.max_length), s.mean_shortfall);
                        }
                        std::fflush(stdout);
                        std::cout << "wrote " << summary.examples << " examples to " << cli->out << " in "
                                  << fixed(summary.seconds, 2) << " s" << std::endl;
                        return 0;
                      }});
}

}  // namespace

void register_data(CLI::App& app, const GlobalOptions& globals, CommandList& commands) {
  CLI::App* group = app.add_subcommand("data", "Prepare token files and synthetic long-context datasets");
  group->require_subcommand(1);
  register_data_prepare(*group, globals, commands);
  register_data_synth(*group, globals, commands);
}

}  // namespace swarmt::cli
