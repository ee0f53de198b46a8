// `swarmt eval niah | passkey | mqar | ppl | qa | recall`: evaluations of a model directory, each writing
// results.json, summary.md and SVG plots into --out.
//   swarmt eval niah --model DIR --variants niah_single_1,niah_multikey_1 --lengths 1024,4096
//                    --samples 10 [--depths 0,50,100] --out DIR
#include <cmath>
#include <filesystem>
#include <iostream>
#include <memory>
#include <sstream>

#include "swarmt/cli/cli_util.h"
#include "swarmt/cli/eval_command.h"
#include "swarmt/cli/recall_vocabulary_args.h"
#include "swarmt/core/atomic_file.h"
#include "swarmt/core/error.h"
#include "swarmt/core/run_lock.h"
#include "swarmt/data/synthetic/niah.h"
#include "swarmt/eval/distance_recall_runner.h"
#include "swarmt/eval/niah_runner.h"
#include "swarmt/eval/perplexity.h"
#include "swarmt/eval/qa_runner.h"
#include "swarmt/eval/recall_runners.h"
#include "swarmt/eval/report.h"
#include "swarmt/report/markdown_table.h"

namespace swarmt::cli {
namespace {

std::vector<double> parse_numbers(const std::string& text, const std::string& option) {
  std::vector<double> out;
  for (const auto& item : split_list(text)) {
    size_t used = 0;
    double v = 0;
    try {
      v = std::stod(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    SWARMT_CHECK_INPUT(used == item.size() && std::isfinite(v), option, ": '", item, "' is not a number");
    out.push_back(v);
  }
  return out;
}

struct ModelArgs {
  std::string model, out, device = "cpu", dtype;
  int64_t window = 0;
  int64_t prefill_chunk = 1024;
  uint64_t seed = 42;
  bool allow_nonfinite = false;
  void add(CLI::App* cmd) {
    cmd->add_option("-m,--model", model, "Model directory")->required();
    cmd->add_option("-o,--out", out, "Output directory for results.json, summary.md and plots")->required();
    cmd->add_option("--window", window, "Sliding window of SWA layers at inference (default: the model's)");
    cmd->add_option("--prefill-chunk", prefill_chunk, "Prompt tokens per prefill forward")->capture_default_str();
    cmd->add_option("--seed", seed, "Data seed")->capture_default_str();
    cmd->add_option("--device", device, "cpu, cuda or cuda:N")->capture_default_str();
    cmd->add_option("--dtype", dtype, "Weights dtype (default: as stored)");
    cmd->add_flag("--allow-nonfinite", allow_nonfinite, "Evaluate weights that hold NaN or Inf (refused otherwise)");
  }
  // --out is this process's until it exits (core/run_lock.h); taken before the model loads.
  RunLock lock_out() const { return RunLock::acquire(out, "--out"); }
  infer::LoadedModel load() const {
    infer::InferenceOptions o;
    o.device = parse_device(device);
    o.dtype = parse_dtype(dtype);
    o.window = window;
    o.prefill_chunk = prefill_chunk;
    o.allow_nonfinite = allow_nonfinite;
    return infer::LoadedModel::load(model, o);
  }
};

void print_summary(const eval::EvalRun& run, const std::string& out) {
  auto agg = eval::aggregate_results(run.samples);
  std::cout << "mean score by length:";
  for (const auto& [length, mean] : agg.by_length) std::cout << " " << length << ": " << format_fixed(mean.mean, 1);
  std::cout << "\nreport written to " << out << "/summary.md" << std::endl;
}

// Memory and speed per context length: into results.json (metadata "resources"), a resources.md table
// beside summary.md, and stdout. Peak RSS is per length (reset before each), so flat memory shows here.
void report_resources(const std::vector<eval::LengthResources>& resources, eval::EvalRun& run) {
  run.metadata["resources"] = eval::resources_to_json(resources);
}

void write_resources(const std::vector<eval::LengthResources>& resources, const std::string& out,
                     const std::string& length_name = "context") {
  MarkdownTable table({length_name, "peak RSS (MB)", "state (MB)", "prefill tokens/s", "s/sample"});
  for (const auto& r : resources)
    table.add_row({eval::length_label(r.length), format_fixed(static_cast<double>(r.peak_rss_bytes) / 1048576.0, 1),
                   format_fixed(static_cast<double>(r.state_bytes) / 1048576.0, 3), format_fixed(r.prefill_tokens_per_s, 0),
                   format_fixed(r.seconds_per_sample, 2)});
  const std::string text = "# Memory and speed by " + length_name + "\n\n" + table.render();
  write_file_atomically(out + "/resources.md", text);
  std::cout << table.render();
}

struct NiahArgs : ModelArgs {
  std::string variants = "niah_single_1", lengths = "4096", depths, essay_dir;
  int64_t samples = 10, max_new_tokens = 0;
};

}  // namespace

void register_eval_niah(CLI::App& group, const GlobalOptions& globals, CommandList& commands) {
  auto o = std::make_shared<NiahArgs>();
  CLI::App* cmd = group.add_subcommand("niah", "RULER needle-in-a-haystack accuracy by variant, length and depth");
  o->add(cmd);
  cmd->add_option("--variants", o->variants, "Comma-separated RULER variants, or 'all'")->capture_default_str();
  cmd->add_option("--lengths", o->lengths, "Comma-separated context lengths (e.g. 1k,4k,128k)")->capture_default_str();
  cmd->add_option("--samples", o->samples, "Samples per (variant, length, depth)")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  cmd->add_option("--depths", o->depths, "Needle depths in percent for a depth sweep (default: random, as RULER)");
  cmd->add_option("--essay-dir", o->essay_dir, "Directory of .txt files for the essay haystack (default: built-in)");
  cmd->add_option("--max-new-tokens", o->max_new_tokens, "Tokens decoded per sample (0: answer length + 8)");
  commands.push_back({cmd, [o, &globals]() {
                        eval::NiahRunOptions r;
                        r.variants = o->variants == "all" ? data::niah_variant_names() : split_list(o->variants);
                        for (const auto& v : r.variants) data::niah_variant(v);  // validate names early
                        r.lengths = parse_lengths(o->lengths, "--lengths");
                        r.samples = o->samples;
                        r.depths = parse_numbers(o->depths, "--depths");
                        r.seed = o->seed;
                        r.max_new_tokens = o->max_new_tokens;
                        r.essay_dir = o->essay_dir;
                        r.quiet = globals.quiet;
                        const RunLock lock = o->lock_out();
                        auto model = o->load();
                        std::vector<eval::LengthResources> resources;
                        auto run = eval::run_niah(model, r, &resources);
                        report_resources(resources, run);
                        eval::ReportOptions report;
                        report.title = "RULER NIAH: " + o->model;
                        eval::write_eval_report(o->out, run, report);
                        write_resources(resources, o->out);
                        print_summary(run, o->out);
                        return 0;
                      }});
}

namespace {
struct PasskeyArgs : ModelArgs {
  std::string lengths = "4096", depths;
  int64_t samples = 10;
};
}  // namespace

void register_eval_passkey(CLI::App& group, const GlobalOptions& globals, CommandList& commands) {
  auto o = std::make_shared<PasskeyArgs>();
  CLI::App* cmd = group.add_subcommand("passkey", "Pass-key retrieval accuracy by length and depth");
  o->add(cmd);
  cmd->add_option("--lengths", o->lengths, "Comma-separated context lengths")->capture_default_str();
  cmd->add_option("--samples", o->samples, "Samples per (length, depth)")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  cmd->add_option("--depths", o->depths, "Key depths in percent (default: random)");
  commands.push_back({cmd, [o, &globals]() {
                        eval::PasskeyRunOptions r;
                        r.lengths = parse_lengths(o->lengths, "--lengths");
                        r.samples = o->samples;
                        r.depths = parse_numbers(o->depths, "--depths");
                        r.seed = o->seed;
                        r.quiet = globals.quiet;
                        const RunLock lock = o->lock_out();
                        auto model = o->load();
                        std::vector<eval::LengthResources> resources;
                        auto run = eval::run_passkey(model, r, &resources);
                        report_resources(resources, run);
                        eval::ReportOptions report;
                        report.title = "Passkey retrieval: " + o->model;
                        eval::write_eval_report(o->out, run, report);
                        write_resources(resources, o->out);
                        print_summary(run, o->out);
                        return 0;
                      }});
}

namespace {
struct MqarArgs : ModelArgs {
  std::string lengths = "256", pairs = "8";
  int64_t samples = 20, vocab_begin = 0, vocab_end = 256;
};
}  // namespace

void register_eval_mqar(CLI::App& group, const GlobalOptions& globals, CommandList& commands) {
  auto o = std::make_shared<MqarArgs>();
  CLI::App* cmd = group.add_subcommand("mqar", "Multi-query associative recall accuracy by length and number of pairs");
  o->add(cmd);
  cmd->add_option("--lengths", o->lengths, "Comma-separated sequence lengths")->capture_default_str();
  cmd->add_option("--pairs", o->pairs, "Comma-separated numbers of key-value pairs")->capture_default_str();
  cmd->add_option("--samples", o->samples, "Samples per (length, pairs)")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  cmd->add_option("--vocab-begin", o->vocab_begin, "First token id used")->capture_default_str();
  cmd->add_option("--vocab-end", o->vocab_end, "One past the last token id used")->capture_default_str();
  commands.push_back({cmd, [o, &globals]() {
                        eval::MqarRunOptions r;
                        r.lengths = parse_lengths(o->lengths, "--lengths");
                        r.num_kv_pairs.clear();
                        for (double p : parse_numbers(o->pairs, "--pairs")) {
                          SWARMT_CHECK_INPUT(p >= 1 && p == std::floor(p), "--pairs: ", p, " is not a positive integer");
                          r.num_kv_pairs.push_back(static_cast<int64_t>(p));
                        }
                        SWARMT_CHECK_INPUT(!r.num_kv_pairs.empty(), "--pairs: no value given");
                        r.samples = o->samples;
                        r.vocab_begin = o->vocab_begin;
                        r.vocab_end = o->vocab_end;
                        r.chunk = o->prefill_chunk;
                        r.seed = o->seed;
                        r.quiet = globals.quiet;
                        const RunLock lock = o->lock_out();
                        auto model = o->load();
                        auto run = eval::run_mqar(model, r);
                        eval::ReportOptions report;
                        report.title = "MQAR: " + o->model;
                        eval::write_eval_report(o->out, run, report);
                        print_summary(run, o->out);
                        return 0;
                      }});
}

namespace {
struct PplArgs : ModelArgs {
  std::string data;
  int64_t length = 4096, windows = 8, bucket = 0;
};
}  // namespace

void register_eval_ppl(CLI::App& group, const GlobalOptions& globals, CommandList& commands) {
  auto o = std::make_shared<PplArgs>();
  CLI::App* cmd = group.add_subcommand("ppl", "Loss by position bucket on a token file");
  o->add(cmd);
  cmd->add_option("--data", o->data, "Token file (.json sidecar or .tokens)")->required();
  cmd->add_option("--length", o->length, "Tokens per window")->capture_default_str();
  cmd->add_option("--windows", o->windows, "Windows evaluated")->capture_default_str();
  cmd->add_option("--bucket", o->bucket, "Bucket size in positions (0: powers of two)")->capture_default_str();
  commands.push_back({cmd, [o, &globals]() {
                        eval::PerplexityOptions r;
                        r.token_file = o->data;
                        r.length = o->length;
                        r.windows = o->windows;
                        r.bucket_size = o->bucket;
                        r.chunk = o->prefill_chunk;
                        r.seed = o->seed;
                        r.quiet = globals.quiet;
                        const RunLock lock = o->lock_out();
                        auto model = o->load();
                        auto result = eval::run_perplexity(model, r);
                        eval::write_perplexity_report(o->out, result,
                                                      Json{{"model", o->model}, {"data", o->data}, {"length", o->length},
                                                           {"windows", o->windows}, {"seed", o->seed}});
                        std::cout << "mean loss " << result.mean_loss << " nats over " << result.tokens
                                  << " tokens; report written to " << o->out << "/summary.md" << std::endl;
                        return 0;
                      }});
}

}  // namespace swarmt::cli

namespace swarmt::cli {
namespace {
struct QaArgs : ModelArgs {
  std::string data;
  int64_t context_limit = 0, max_examples = 0, max_new_tokens = 0;
};
}  // namespace

void register_eval_qa(CLI::App& group, const GlobalOptions& globals, CommandList& commands) {
  auto o = std::make_shared<QaArgs>();
  CLI::App* cmd = group.add_subcommand("qa", "Exact-match accuracy on a `swarmt data synth` JSONL file, by bucket and length");
  o->add(cmd);
  cmd->add_option("--data", o->data, "JSONL file written by `swarmt data synth`")->required();
  cmd->add_option("--context-limit", o->context_limit,
                  "Keep only the last N prompt tokens (a model limited to N tokens of context)");
  cmd->add_option("--max-examples", o->max_examples, "Evaluate the first N examples only");
  cmd->add_option("--max-new-tokens", o->max_new_tokens, "Generated tokens per answer (default: answer length + 4)");
  commands.push_back({cmd, [o, &globals]() {
                        SWARMT_CHECK_INPUT(o->context_limit >= 0, "--context-limit must be >= 0");
                        eval::QaRunOptions r;
                        r.data_path = o->data;
                        r.context_limit = o->context_limit;
                        r.max_examples = o->max_examples;
                        r.max_new_tokens = o->max_new_tokens;
                        r.quiet = globals.quiet;
                        const RunLock lock = o->lock_out();
                        auto model = o->load();
                        std::vector<eval::LengthResources> resources;
                        auto run = eval::run_qa(model, r, &resources);
                        eval::ReportOptions report;
                        report.title = "QA exact match: " + o->model + " on " + o->data;
                        eval::write_eval_report(o->out, run, report);
                        write_resources(resources, o->out);
                        print_summary(run, o->out);
                        return 0;
                      }});
}

}  // namespace swarmt::cli

namespace swarmt::cli {
namespace {
struct RecallArgs : ModelArgs {
  std::string distances = "16,64,256,1k", keys, values, filler;
  int64_t pairs = 4, gap = 0, rewrites = 0, samples = 100, batch = 8, training_length = 0;
  bool forget_beyond_window = false, shuffle_questions = false, distinct_values = false, hidden_answers = false;
};

}  // namespace

void register_eval_recall(CLI::App& group, const GlobalOptions& globals, CommandList& commands) {
  auto o = std::make_shared<RecallArgs>();
  CLI::App* cmd = group.add_subcommand("recall", "Associative-recall accuracy by the distance between a fact and its question");
  // Small chunks: the activations of one chunk are most of the memory above the weights, and the
  // memory must not depend on the distance (measured: 512 is also no slower than 2048 here).
  o->prefill_chunk = 512;
  o->add(cmd);
  cmd->add_option("--distances", o->distances, "Comma-separated distances in tokens (e.g. 16,64,1k,1M)")->capture_default_str();
  cmd->add_option("--pairs", o->pairs, "Key-value pairs per probe, each asked once")->capture_default_str();
  cmd->add_option("--gap", o->gap, "Filler tokens after each pair and each question")->capture_default_str();
  cmd->add_option("--rewrites", o->rewrites,
                  "Rounds that restate every key with a new value before the questions (the answer is the latest)")
      ->capture_default_str();
  cmd->add_flag("--shuffle-questions", o->shuffle_questions,
                "Ask the keys in a random order (each question then within (pairs - 1)(2 + gap) of the distance), "
                "so that answering needs the key, not the order the facts were stated in");
  cmd->add_flag("--distinct-values", o->distinct_values,
                "No two keys hold the same value (else the most frequent stated value is right more often than 1/pairs)");
  cmd->add_flag("--hide-answers", o->hidden_answers,
                "Follow each question with filler, not its answer (else the answers already given rule their "
                "values out for the later questions)");
  cmd->add_option("--samples", o->samples, "Probes per distance")->capture_default_str();
  cmd->add_option("--batch", o->batch, "Probes streamed together")->capture_default_str();
  cmd->add_option("--training-length", o->training_length,
                  "Training length marked on the plot (default: train_config.json beside the model)");
  cmd->add_option("--keys", o->keys, "Key ids BEGIN:END (default: the model's training task, else 1:65)");
  cmd->add_option("--values", o->values, "Value ids BEGIN:END (default: the training task's, else 65:129)");
  cmd->add_option("--filler", o->filler, "Filler ids BEGIN:END (default: the training task's, else 129:256)");
  cmd->add_flag("--forget-beyond-window", o->forget_beyond_window,
                "Control: reset the recurrent layers' memory one window before the questions");
  commands.push_back({cmd, [o, &globals]() {
                        eval::RecallRunOptions r;
                        r.distances = parse_lengths(o->distances, "--distances");
                        SWARMT_CHECK_INPUT(o->pairs >= 1 && o->pairs <= 4096, "--pairs must be in [1, 4096] (got ", o->pairs, ")");
                        SWARMT_CHECK_INPUT(o->samples >= 1 && o->samples <= 1000000, "--samples must be in [1, 1000000] (got ", o->samples, ")");
                        SWARMT_CHECK_INPUT(o->training_length >= 0, "--training-length must be >= 0");
                        recall_defaults_from_training(o->model, r.vocabulary, &o->training_length);
                        r.vocabulary = recall_vocabulary_from_args(r.vocabulary, o->keys, o->values, o->filler);
                        r.pairs = o->pairs;
                        r.gap = o->gap;
                        r.rewrites = o->rewrites;
                        r.shuffle_questions = o->shuffle_questions;
                        r.draw.distinct_values = o->distinct_values;
                        r.draw.hidden_answers = o->hidden_answers;
                        r.samples = o->samples;
                        r.batch = o->batch;
                        r.chunk = o->prefill_chunk;
                        r.forget_beyond_window = o->forget_beyond_window;
                        r.seed = o->seed;
                        r.quiet = globals.quiet;
                        const RunLock lock = o->lock_out();
                        auto model = o->load();
                        std::vector<eval::LengthResources> resources;
                        auto run = eval::run_distance_recall(model, r, &resources);
                        if (o->training_length > 0) run.metadata["training_length"] = o->training_length;
                        eval::ReportOptions report;
                        report.title = str_cat(
                            "Recall accuracy vs distance, ",
                            r.pairs == 1 ? std::string("one fact") : str_cat(r.pairs, " facts (each asked among ", r.pairs - 1, " others)"),
                            r.rewrites > 0 ? str_cat(", each rewritten ", r.rewrites, r.rewrites == 1 ? " time" : " times", " (answer: the latest value)") : std::string(),
                            r.shuffle_questions && r.pairs > 1 ? ", asked in a random order" : "",
                            r.draw.distinct_values && r.pairs > 1 ? ", distinct values" : "",
                            r.draw.hidden_answers && r.pairs > 1 ? ", answers not shown" : "",
                            r.forget_beyond_window ? ", recurrent memory cut at the window" : "");
                        report.length_name = "distance";
                        report.include_prompts = false;
                        const int64_t window = run.metadata["window"].get<int64_t>();
                        if (window > 0) report.marks.push_back({static_cast<double>(window), str_cat("window ", window)});
                        if (o->training_length > 0)
                          report.marks.push_back({static_cast<double>(o->training_length), str_cat("training length ", o->training_length)});
                        eval::write_eval_report(o->out, run, report);
                        write_resources(resources, o->out, "distance");
                        const auto agg = eval::aggregate_results(run.samples);
                        // Beside each accuracy the floor of an answerer that does not bind keys to values.
                        MarkdownTable table({"distance", "accuracy % [95% CI]", "key-blind %", "questions"});
                        for (const auto& [distance, score] : agg.by_length)
                          table.add_row({eval::length_label(distance), eval::format_score(score),
                                         format_fixed(run.metadata["key_blind_percent"][std::to_string(distance)].get<double>(), 1),
                                         std::to_string(score.count)});
                        std::cout << table.render() << "report written to " << o->out << "/summary.md" << std::endl;
                        return 0;
                      }});
}

}  // namespace swarmt::cli
