// NIAH generator: haystacks, needle placement, length fitting (RULER scripts/data/synthetic/niah.py).
#include "swarmt/data/synthetic/niah.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "swarmt/core/error.h"
#include "swarmt/data/synthetic/essay_text.h"
#include "swarmt/data/synthetic/synthetic_tasks.h"
#include "swarmt/data/synthetic/synthetic_tasks_random.h"
#include "swarmt/data/synthetic/word_lists.h"

namespace swarmt::data {
namespace {

// A random key or value of the given type (niah.py generate_random).
std::string random_needle_value(TaskRng& rng, NeedleType type) {
  switch (type) {
    case NeedleType::Words:
      return rng.choice(common_adjectives()) + "-" + rng.choice(common_nouns());
    case NeedleType::Numbers:
      return std::to_string(rng.uniform_int(1000000, 9999999));  // 7 digits
    case NeedleType::Uuids:
      return rng.uuid4();
  }
  return "";
}

// A value not in `taken` (which it then joins): distinct keys, distinct values, distractors that never
// repeat a real key.
std::string fresh_value(TaskRng& rng, NeedleType type, std::set<std::string>& taken) {
  for (int attempt = 0; attempt < 1000; ++attempt) {
    std::string v = random_needle_value(rng, type);
    if (taken.insert(v).second) return v;
  }
  throw_internal_error("could not draw a fresh ", to_string(type), " value");
}

uint64_t fnv1a(const std::string& s) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

std::string join(const std::vector<std::string>& parts, size_t begin, size_t end, const std::string& sep) {
  std::string out;
  for (size_t i = begin; i < end; ++i) {
    if (i > begin) out += sep;
    out += parts[i];
  }
  return out;
}

struct Needle {
  std::string text;
  bool is_target = false;  // holds the first expected answer
};

}  // namespace

NiahGenerator::NiahGenerator(NiahTaskConfig task, uint64_t seed,
                             std::shared_ptr<const std::vector<std::string>> essay_words)
    : task_(std::move(task)), seed_(seed), essay_words_(std::move(essay_words)) {
  SWARMT_CHECK_INPUT(task_.num_needle_k >= 1 && task_.num_needle_v >= 1 && task_.num_needle_q >= 1, "NIAH task '",
                     task_.name, "': num_needle_k, num_needle_v and num_needle_q must be >= 1");
  SWARMT_CHECK_INPUT(task_.tokens_to_generate >= 0, "NIAH task '", task_.name, "': tokens_to_generate must be >= 0");
  task_.num_needle_k = std::max(task_.num_needle_k, task_.num_needle_q);  // as niah.py
  const int num_needles = task_.num_needle_k * task_.num_needle_v;
  if (task_.haystack == HaystackType::Essay) {
    SWARMT_CHECK_INPUT(num_needles <= static_cast<int>(ruler_depths().size()), "NIAH task '", task_.name, "': ",
                       num_needles, " needles do not fit the ", ruler_depths().size(), " essay depths");
    if (!essay_words_) {
      // Non-owning handle to the process-wide built-in words.
      essay_words_ = std::shared_ptr<const std::vector<std::string>>(std::shared_ptr<void>(),
                                                                     &builtin_essay_words());
    }
    SWARMT_CHECK_INPUT(!essay_words_->empty(), "NIAH task '", task_.name, "': the essay text has no words");
  }
}

int64_t NiahGenerator::incremental(int64_t max_seq_length) const {
  if (task_.haystack == HaystackType::Essay) return 500;
  return max_seq_length < 4096 ? 5 : 25;
}

int64_t NiahGenerator::min_haystack_size() const {
  // noise/needle insert each needle at a distinct index of range(N), so N >= number of needles.
  if (task_.haystack == HaystackType::Essay) return 1;
  return task_.num_needle_k * task_.num_needle_v;
}

uint64_t NiahGenerator::sample_seed(int64_t max_seq_length, int64_t index) const {
  uint64_t s = mix_seed(seed_, fnv1a(task_.name));
  s = mix_seed(s, static_cast<uint64_t>(max_seq_length));
  return mix_seed(s, static_cast<uint64_t>(index));
}

NiahPrompt NiahGenerator::build_prompt(int64_t haystack_size, uint64_t sample_seed,
                                       std::optional<double> depth_percent) const {
  SWARMT_CHECK_INPUT(haystack_size >= min_haystack_size(), "NIAH task '", task_.name, "': haystack size ",
                     haystack_size, " is below the minimum ", min_haystack_size());
  if (depth_percent)
    SWARMT_CHECK_INPUT(*depth_percent >= 0 && *depth_percent <= 100, "NIAH depth must be in [0, 100] percent (got ",
                       *depth_percent, ")");
  TaskRng rng(sample_seed);
  const int k = task_.num_needle_k, v = task_.num_needle_v, q = task_.num_needle_q;

  // Keys, values and their needle sentences, key-major as niah.py builds them.
  std::set<std::string> taken_keys, taken_values;
  std::vector<std::string> keys;
  std::vector<std::vector<std::string>> values(static_cast<size_t>(k));
  std::vector<std::pair<int, int>> needle_kv;  // (key index, value index) of each needle
  for (int i = 0; i < k; ++i) {
    keys.push_back(fresh_value(rng, task_.key_type, taken_keys));
    for (int j = 0; j < v; ++j) {
      values[static_cast<size_t>(i)].push_back(fresh_value(rng, task_.value_type, taken_values));
      needle_kv.emplace_back(i, j);
    }
  }
  // niah.py: random.Random(args.random_seed).shuffle(needles), a fresh generator from the run seed.
  TaskRng shuffle_rng(seed_);
  shuffle_rng.shuffle(needle_kv);

  // Queries: q distinct keys; the answers are all values of each queried key, in order.
  std::vector<int64_t> query_indices = rng.sample_without_replacement(k, q);
  std::vector<std::string> queries;
  NiahPrompt prompt;
  for (int64_t qi : query_indices) {
    queries.push_back(keys[static_cast<size_t>(qi)]);
    for (const auto& value : values[static_cast<size_t>(qi)]) prompt.answers.push_back(value);
  }
  std::vector<Needle> needles;
  for (const auto& [ki, vi] : needle_kv) {
    Needle n;
    n.text = niah_needle_sentence(task_.value_type, keys[static_cast<size_t>(ki)],
                                  values[static_cast<size_t>(ki)][static_cast<size_t>(vi)]);
    n.is_target = ki == query_indices[0] && vi == 0;
    needles.push_back(std::move(n));
  }
  const size_t num_needles = needles.size();
  const auto target = static_cast<size_t>(
      std::find_if(needles.begin(), needles.end(), [](const Needle& n) { return n.is_target; }) - needles.begin());

  std::string context;
  if (task_.haystack == HaystackType::Essay) {
    // The first N words (repeating the text if needed), split into sentences.
    const auto& words = *essay_words_;
    std::string text;
    for (int64_t i = 0; i < haystack_size; ++i) {
      if (i) text += ' ';
      text += words[static_cast<size_t>(i) % words.size()];
    }
    std::vector<std::string> sentences = split_sentences(text);
    const double num_sentences = static_cast<double>(sentences.size());

    // Depths drawn without replacement from the 40 RULER depths, sorted, then given to the needles in
    // their (shuffled) order. A fixed depth goes to the target needle; the others keep the random rule.
    std::vector<double> depth_of(num_needles);
    std::vector<int> pool;
    for (int d : ruler_depths())
      if (!depth_percent || d != *depth_percent) pool.push_back(d);
    const size_t random_count = depth_percent ? num_needles - 1 : num_needles;
    std::vector<int> drawn;
    for (int64_t idx : rng.sample_without_replacement(static_cast<int64_t>(pool.size()), static_cast<int64_t>(random_count)))
      drawn.push_back(pool[static_cast<size_t>(idx)]);
    std::sort(drawn.begin(), drawn.end());
    for (size_t i = 0, next = 0; i < num_needles; ++i) {
      if (depth_percent && i == target) {
        depth_of[i] = *depth_percent;
      } else {
        depth_of[i] = drawn[next++];
      }
    }
    // (insertion sentence index, needle); int(len(sentences) * depth / 100) as niah.py.
    std::vector<std::pair<int64_t, size_t>> insertions;
    for (size_t i = 0; i < num_needles; ++i)
      insertions.emplace_back(static_cast<int64_t>(num_sentences * (depth_of[i] / 100.0)), i);
    std::stable_sort(insertions.begin(), insertions.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<std::string> parts;
    size_t last = 0;
    for (const auto& [position, needle] : insertions) {
      parts.push_back(join(sentences, last, static_cast<size_t>(position), " "));
      parts.push_back(needles[needle].text);
      last = static_cast<size_t>(position);
    }
    parts.push_back(join(sentences, last, sentences.size(), " "));
    context = join(parts, 0, parts.size(), " ");
    prompt.depth = depth_of[target];
  } else {
    std::vector<std::string> sentences;
    sentences.reserve(static_cast<size_t>(haystack_size) + num_needles);
    if (task_.haystack == HaystackType::Noise) {
      sentences.assign(static_cast<size_t>(haystack_size), noise_filler());
    } else {
      for (int64_t i = 0; i < haystack_size; ++i) {
        std::string key = fresh_value(rng, task_.key_type, taken_keys);  // never a real key
        std::string value = random_needle_value(rng, task_.value_type);
        sentences.push_back(niah_needle_sentence(task_.value_type, key, value));
      }
    }
    // niah.py: indexes = sorted(random.sample(range(N), n), reverse=True); needle i is inserted at the
    // i-th largest index, in that order. A fixed depth pins the target's index to int(N * depth / 100).
    std::vector<int64_t> index_of(num_needles);
    if (depth_percent) {
      const int64_t pinned = static_cast<int64_t>(static_cast<double>(haystack_size) * (*depth_percent / 100.0));
      std::vector<int64_t> others;
      for (int64_t idx : rng.sample_without_replacement(haystack_size, static_cast<int64_t>(num_needles))) {
        if (idx != pinned && others.size() + 1 < num_needles) others.push_back(idx);
      }
      std::sort(others.rbegin(), others.rend());
      for (size_t i = 0, next = 0; i < num_needles; ++i) index_of[i] = i == target ? pinned : others[next++];
    } else {
      std::vector<int64_t> drawn = rng.sample_without_replacement(haystack_size, static_cast<int64_t>(num_needles));
      std::sort(drawn.rbegin(), drawn.rend());
      for (size_t i = 0; i < num_needles; ++i) index_of[i] = drawn[i];
    }
    std::vector<size_t> order(num_needles);
    for (size_t i = 0; i < num_needles; ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return index_of[a] > index_of[b]; });
    for (size_t i : order)
      sentences.insert(sentences.begin() + static_cast<std::ptrdiff_t>(index_of[i]), needles[i].text);
    context = join(sentences, 0, sentences.size(), "\n");
    prompt.depth = depth_percent ? *depth_percent
                                 : 100.0 * static_cast<double>(index_of[target]) / static_cast<double>(haystack_size);
  }
  prompt.text = format_niah_prompt(task_, context, queries);
  return prompt;
}

LengthFit NiahGenerator::fit_length(int64_t max_seq_length, const TokenCounter& count_tokens,
                                          std::optional<double> depth_percent) const {
  const uint64_t probe_seed = sample_seed(max_seq_length, 0);
  LengthFitOptions options;
  options.max_seq_length = max_seq_length;
  options.tokens_to_generate = task_.tokens_to_generate;
  options.min_units = min_haystack_size();
  options.first_probe = incremental(max_seq_length);
  return fit_haystack_size(
      [&](int64_t units) { return build_prompt(units, probe_seed, depth_percent).text; }, count_tokens, options);
}

NiahSample NiahGenerator::generate_sample(int64_t index, int64_t max_seq_length, const LengthFit& fit,
                                          const TokenCounter& count_tokens,
                                          std::optional<double> depth_percent) const {
  const uint64_t seed = sample_seed(max_seq_length, index);
  const int64_t budget = max_seq_length - task_.tokens_to_generate;
  int64_t units = fit.units;
  for (int attempt = 0; attempt < 32; ++attempt) {
    NiahPrompt p = build_prompt(units, seed, depth_percent);
    int64_t tokens = count_tokens(p.text);
    if (tokens <= budget) {
      NiahSample s;
      s.id = index;
      s.variant = task_.name;
      s.length = max_seq_length;
      s.depth = p.depth;
      s.prompt = std::move(p.text);
      s.answers = std::move(p.answers);
      s.token_count = tokens;
      s.haystack_size = units;
      return s;
    }
    // This sample's needles tokenise longer than the probe's: shrink by the estimated excess.
    double rate = std::max(fit.tokens_per_unit, 1e-9);
    int64_t shrink = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(static_cast<double>(tokens - budget) / rate)));
    units -= shrink;
    SWARMT_CHECK_INPUT(units >= min_haystack_size(), "NIAH task '", task_.name, "': sample ", index,
                       " does not fit max_seq_length ", max_seq_length);
  }
  throw_internal_error("NIAH task '", task_.name, "': sample ", index, " did not converge to the token budget");
}

std::vector<NiahSample> NiahGenerator::generate(int64_t num_samples, int64_t max_seq_length,
                                                const TokenCounter& count_tokens,
                                                std::optional<double> depth_percent) const {
  LengthFit fit = fit_length(max_seq_length, count_tokens, depth_percent);
  std::vector<NiahSample> samples;
  samples.reserve(static_cast<size_t>(std::max<int64_t>(0, num_samples)));
  for (int64_t i = 0; i < num_samples; ++i)
    samples.push_back(generate_sample(i, max_seq_length, fit, count_tokens, depth_percent));
  return samples;
}

}  // namespace swarmt::data
