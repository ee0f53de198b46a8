// `swarmt armt lookup --model DIR [--pairs 5] [--gap 14] [--distance 128] [--samples 40] [--json FILE]`:
// whether each memory layer of an ARMT model reads a fact back by its key (eval/armt_lookup.h), on the
// probes `swarmt eval recall` uses at that distance (same seeds), beside the model's own answers to them.
#include <iostream>
#include <memory>

#include "swarmt/cli/cli_util.h"
#include "swarmt/cli/command.h"
#include "swarmt/cli/recall_vocabulary_args.h"
#include "swarmt/core/atomic_file.h"
#include "swarmt/core/error.h"
#include "swarmt/core/random.h"
#include "swarmt/eval/armt_lookup.h"
#include "swarmt/eval/wilson_interval.h"
#include "swarmt/models/model_io.h"
#include "swarmt/report/markdown_table.h"

namespace swarmt::cli {
namespace {

struct LookupOptions {
  std::string model, json_out, keys, values, filler;
  int64_t pairs = 5, gap = 0, distance = 128, samples = 40;
  uint64_t seed = 42;
  bool shuffle_questions = false;
};

std::string percent_with_interval(int64_t successes, int64_t n) {
  const auto ci = eval::wilson_interval(successes, n);
  return str_cat(format_fixed(100.0 * static_cast<double>(successes) / static_cast<double>(n), 1), " [",
                 format_fixed(100.0 * ci.low, 1), ", ", format_fixed(100.0 * ci.high, 1), "]");
}

int run_lookup(const LookupOptions& o) {
  SWARMT_CHECK_INPUT(o.pairs >= 2 && o.pairs <= 4096, "--pairs must be in [2, 4096] (got ", o.pairs, "): the lookup compares a question's own fact with the others");
  SWARMT_CHECK_INPUT(o.samples >= 1 && o.samples <= 100000, "--samples must be in [1, 100000] (got ", o.samples, ")");
  // The trace keeps every position's read features and hidden state (eval/armt_lookup.h): about 4 KB per
  // token and memory layer for the study's models, so the probes stay short.
  SWARMT_CHECK_INPUT(o.distance >= 1 && o.distance <= 16384, "--distance must be in [1, 16384] (got ", o.distance,
                     "): the lookup holds every position of a probe in memory");
  SWARMT_CHECK_INPUT(o.gap >= 0 && o.gap <= 1 << 20, "--gap must be in [0, 2^20] (got ", o.gap, ")");
  SWARMT_CHECK_INPUT(o.distance >= (2 + o.gap) * o.pairs, "--distance: ", o.distance, " is shorter than the ",
                     o.pairs, " facts (", (2 + o.gap) * o.pairs, " tokens with --gap ", o.gap,
                     "); the questions must follow every fact");
  data::RecallVocabulary vocabulary;
  recall_defaults_from_training(o.model, vocabulary);
  vocabulary = recall_vocabulary_from_args(vocabulary, o.keys, o.values, o.filler);
  auto model = models::load_model(o.model);
  auto* armt = dynamic_cast<models::ArmtModel*>(model.get());
  SWARMT_CHECK_INPUT(armt != nullptr, o.model, ": not an ARMT model (give an adapter or merged ARMT directory)");
  SWARMT_CHECK_INPUT(vocabulary.filler_end <= model->vocab_size() && vocabulary.key_end <= model->vocab_size() &&
                         vocabulary.value_end <= model->vocab_size(),
                     "--keys/--values/--filler: ids must be below the model's vocabulary size ", model->vocab_size());
  model->eval();
  eval::LookupAccumulator lookup(armt->config().segment_size);
  int64_t correct = 0, asked = 0;
  for (int64_t s = 0; s < o.samples; ++s) {
    // The seeds of `swarmt eval recall` (eval/distance_recall_runner.cpp), so both see the same probes.
    const auto probe = data::make_recall_probe(
        vocabulary, o.pairs, o.distance,
        mix_key(mix_key(o.seed, static_cast<uint64_t>(o.distance)), static_cast<uint64_t>(s)), o.gap, 0,
        o.shuffle_questions);
    const auto tokens = probe.tokens(0, probe.length());
    const auto trace = eval::trace_armt(*armt, at::tensor(tokens, at::kLong).unsqueeze(0));
    lookup.add(trace, probe);
    for (int64_t i = 0; i < probe.num_pairs(); ++i) {
      const int64_t answer =
          armt->head(trace.hidden.select(1, probe.query_position(i)).unsqueeze(1)).argmax(-1).item<int64_t>();
      correct += answer == probe.values[static_cast<size_t>(i)] ? 1 : 0;
      ++asked;
    }
  }
  const auto stats = lookup.stats();
  MarkdownTable table({"layer", "lookup (%)", "query cosine", "own / other match", "key cosine, same / other key",
                       "β facts", "β other segments"});
  Json layers = Json::array();
  for (const auto& r : stats) {
    table.add_row({std::to_string(r.layer), percent_with_interval(r.hits, r.questions), format_fixed(r.query_cosine, 3),
                   str_cat(format_fixed(r.own_match, 3), " / ", format_fixed(r.other_match, 3)),
                   str_cat(format_fixed(r.key_cosine_same, 3), " / ", format_fixed(r.key_cosine_different, 3)),
                   format_fixed(r.beta_fact, 3), format_fixed(r.beta_other, 3)});
    layers.push_back(r.to_json());
  }
  std::cout << "Answers: " << percent_with_interval(correct, asked) << " % of " << asked << " questions ("
            << o.pairs << " facts, each asked " << o.distance << " tokens after it). Lookup: the share of questions "
            << "whose own fact's write matches the read best (chance " << format_fixed(100.0 / static_cast<double>(o.pairs), 1)
            << " %).\n"
            << table.render();
  if (!o.json_out.empty())
    write_file_atomically(
        o.json_out,
        Json{{"model", o.model}, {"pairs", o.pairs}, {"gap", o.gap}, {"distance", o.distance},
             {"shuffle_questions", o.shuffle_questions}, {"samples", o.samples},
             {"seed", o.seed}, {"keys", {vocabulary.key_begin, vocabulary.key_end}},
             {"values", {vocabulary.value_begin, vocabulary.value_end}},
             {"filler", {vocabulary.filler_begin, vocabulary.filler_end}}, {"answers_correct", correct},
             {"questions", asked}, {"lookup_chance", 1.0 / static_cast<double>(o.pairs)}, {"layers", layers}}
                .dump(2) +
            "\n");
  return 0;
}

}  // namespace

void register_armt_lookup(CLI::App& group, CommandList& commands) {
  auto o = std::make_shared<LookupOptions>();
  CLI::App* c = group.add_subcommand(
      "lookup", "Whether each memory layer reads facts back by key: query-write matches on recall probes");
  c->add_option("-m,--model", o->model, "ARMT model (adapter or merged directory)")->required();
  c->add_option("--pairs", o->pairs, "Facts per probe, each asked once")->capture_default_str();
  c->add_option("--gap", o->gap, "Filler tokens after each fact and each question")->capture_default_str();
  c->add_option("--distance", o->distance, "Tokens between a fact and its question")->capture_default_str();
  c->add_option("--samples", o->samples, "Probes")->capture_default_str();
  c->add_flag("--shuffle-questions", o->shuffle_questions, "Ask the facts in a random order (as `eval recall` does)");
  c->add_option("--seed", o->seed, "Data seed (the probes of `swarmt eval recall` with the same seed)")->capture_default_str();
  c->add_option("--keys", o->keys, "Key ids BEGIN:END (default: the model's training task, else 1:65)");
  c->add_option("--values", o->values, "Value ids BEGIN:END (default: the training task's, else 65:129)");
  c->add_option("--filler", o->filler, "Filler ids BEGIN:END (default: the training task's, else 129:256)");
  c->add_option("--json", o->json_out, "Write the numbers as JSON");
  commands.push_back({c, [o]() { return run_lookup(*o); }});
}

}  // namespace swarmt::cli
