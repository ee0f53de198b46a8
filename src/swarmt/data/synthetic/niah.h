// RULER needle-in-a-haystack (NIAH) task generator, faithful to NVIDIA/RULER
// `scripts/data/synthetic/niah.py` with the base-model template (`scripts/data/template.py` entry
// "base" = identity) and the answer prefix of `scripts/data/synthetic/constants.py` appended.
//
// A needle is the sentence "One of the special magic {type_needle_v} for {key} is: {value}.". The
// haystack is one of
//   noise   the filler "The grass is green. ... There and back again." repeated N times, joined with
//           "\n"; needles inserted at random paragraph indices;
//   essay   the first N words of an essay text (repeated if needed), split into sentences, needles
//           inserted at sentence boundaries at depths drawn without replacement from
//           round(linspace(0, 100, 40)) percent; parts joined with " ";
//   needle  N distractor needles with random keys and values, joined with "\n".
// Keys and values are "adjective-noun" words, 7-digit numbers or version-4 UUIDs. num_needle_k keys
// (at least num_needle_q) each get num_needle_v values; num_needle_q keys are queried and every value of
// a queried key is an expected answer. N is fitted to the caller's token budget (see fit_length).
//
// Deliberate differences from RULER (documented choices):
//  * keys are distinct, and distractor keys of the `needle` haystack never equal a real key (RULER does
//    not check; a collision would make the expected answer ambiguous);
//  * sample i is drawn from its own seed (mix of run seed, variant, length and i), so samples can be
//    generated independently; RULER draws all samples from one global stream;
//  * a fixed depth (the depth sweep) places the needle of the first expected answer at that depth;
//    the other needles keep RULER's random placement.
//  * like RULER, the needle order is shuffled with a generator re-seeded from the run seed on every
//    sample (`random.Random(args.random_seed).shuffle(needles)`), i.e. the same permutation each time.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "swarmt/data/synthetic/synthetic_tasks_length_fit.h"

namespace swarmt::data {

enum class HaystackType { Noise, Essay, Needle };
enum class NeedleType { Words, Numbers, Uuids };

std::string to_string(HaystackType type);  // "noise", "essay", "needle"
std::string to_string(NeedleType type);    // "words", "numbers", "uuids" (RULER's type_needle_* names)
HaystackType parse_haystack_type(const std::string& name);  // BadInput listing the valid names
NeedleType parse_needle_type(const std::string& name);

struct NiahTaskConfig {
  std::string name = "niah_single_1";
  HaystackType haystack = HaystackType::Noise;
  NeedleType key_type = NeedleType::Words;
  NeedleType value_type = NeedleType::Numbers;
  int num_needle_k = 1;  // keys in the haystack (raised to num_needle_q if smaller, as RULER)
  int num_needle_v = 1;  // values (needles) per key
  int num_needle_q = 1;  // keys asked for
  int64_t tokens_to_generate = 128;
};

// The 8 standard RULER NIAH variants (`scripts/synthetic.yaml`), by name.
const std::vector<std::string>& niah_variant_names();
NiahTaskConfig niah_variant(const std::string& name);  // BadInput listing the known names

// RULER's needle depths: round(linspace(0, 100, 40)) = 0, 3, 5, 8, ..., 97, 100.
const std::vector<int>& ruler_depths();

// Prompt pieces, exposed for tests and for other task generators.
std::string niah_needle_sentence(NeedleType value_type, const std::string& key, const std::string& value);
// "a"; "a, and b"; "a, b, and c" (RULER's joining: the comma before "and" even for two).
std::string join_queries(const std::vector<std::string>& queries);
// The full prompt: template (with RULER's singular-grammar rewrite when q * v == 1) + answer prefix.
std::string format_niah_prompt(const NiahTaskConfig& task, const std::string& context,
                               const std::vector<std::string>& queries);

// One generated prompt before length bookkeeping.
struct NiahPrompt {
  std::string text;                  // template input + answer prefix: what the model reads
  std::vector<std::string> answers;  // expected answers (all values of the queried keys)
  double depth = 0;                  // depth (percent) of the needle of answers[0]
};

struct NiahSample {
  int64_t id = 0;                    // sample index within (variant, length)
  std::string variant;
  int64_t length = 0;                // the target max_seq_length (prompt + tokens_to_generate budget)
  double depth = 0;                  // depth (percent) of the needle of the first answer
  std::string prompt;
  std::vector<std::string> answers;
  int64_t token_count = 0;           // tokens of `prompt` under the caller's counter
  int64_t haystack_size = 0;         // words (essay), filler paragraphs (noise), distractors (needle)
};

class NiahGenerator {
 public:
  // `essay_words`: the words of the essay haystack (e.g. split_words(load_essay_directory(dir)));
  // null means the built-in essay text. Unused by noise/needle haystacks.
  explicit NiahGenerator(NiahTaskConfig task, uint64_t seed = 42,
                         std::shared_ptr<const std::vector<std::string>> essay_words = nullptr);

  const NiahTaskConfig& task() const { return task_; }

  // The prompt for a haystack of `haystack_size` units, drawn from `sample_seed`; a depth (percent,
  // 0..100) fixes where the needle of the first answer goes.
  NiahPrompt build_prompt(int64_t haystack_size, uint64_t sample_seed,
                          std::optional<double> depth_percent = std::nullopt) const;

  // RULER's haystack step for this task and length: 500 words (essay), 25 paragraphs or needles
  // (noise, needle), 5 below 4096 tokens. Used as the first probe of the search.
  int64_t incremental(int64_t max_seq_length) const;

  // Largest haystack size with tokens(prompt) + tokens_to_generate <= max_seq_length.
  LengthFit fit_length(int64_t max_seq_length, const TokenCounter& count_tokens,
                             std::optional<double> depth_percent = std::nullopt) const;

  // Sample `index` at the fitted size; shrinks the haystack (and recounts) in the rare case the
  // sample's own needles make it overshoot.
  NiahSample generate_sample(int64_t index, int64_t max_seq_length, const LengthFit& fit,
                             const TokenCounter& count_tokens,
                             std::optional<double> depth_percent = std::nullopt) const;

  // fit_length once, then samples 0..num_samples-1.
  std::vector<NiahSample> generate(int64_t num_samples, int64_t max_seq_length, const TokenCounter& count_tokens,
                                   std::optional<double> depth_percent = std::nullopt) const;

  // The seed of sample `index` at `max_seq_length` (mix of run seed, variant name, length, index).
  uint64_t sample_seed(int64_t max_seq_length, int64_t index) const;

 private:
  int64_t min_haystack_size() const;

  NiahTaskConfig task_;
  uint64_t seed_;
  std::shared_ptr<const std::vector<std::string>> essay_words_;
};

}  // namespace swarmt::data
