#include "swarmt/data/synthetic/synthetic_tasks.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "swarmt/core/error.h"
#include "swarmt/data/synthetic/synthetic_tasks_random.h"

namespace swarmt::data {

const std::string& noise_filler() {
  static const std::string kFiller =
      "The grass is green. The sky is blue. The sun is yellow. Here we go. There and back again.";
  return kFiller;
}

// ---------------------------------------------------------------------------------------------------
// MQAR

MqarConfig MqarConfig::zoology(int64_t vocab_size, int64_t seq_len, int64_t num_kv_pairs) {
  MqarConfig c;
  c.seq_len = seq_len;
  c.num_kv_pairs = num_kv_pairs;
  c.key_begin = 1;
  c.key_end = vocab_size / 2;
  c.value_begin = vocab_size / 2;
  c.value_end = vocab_size;
  c.noise_begin = 0;
  c.noise_end = vocab_size;
  c.filler_token = 0;
  return c;
}

void validate_mqar_config(const MqarConfig& c) {
  SWARMT_CHECK_INPUT(c.seq_len > 0 && c.seq_len % 2 == 0, "mqar: seq_len must be positive and even (got ", c.seq_len, ")");
  SWARMT_CHECK_INPUT(c.num_kv_pairs >= 1, "mqar: num_kv_pairs must be >= 1 (got ", c.num_kv_pairs, ")");
  SWARMT_CHECK_INPUT(c.num_passes >= 1, "mqar: num_passes must be >= 1 (got ", c.num_passes, ")");
  const int64_t prefix = 2 * c.num_kv_pairs * c.num_passes;
  SWARMT_CHECK_INPUT(prefix + 2 * c.num_kv_pairs <= c.seq_len, "mqar: seq_len ", c.seq_len, " is too short for ",
                     c.num_kv_pairs, " key-value pairs (prefix ", prefix, " tokens + ", 2 * c.num_kv_pairs,
                     " query slots)");
  SWARMT_CHECK_INPUT(c.key_begin >= 0 && c.key_end - c.key_begin >= c.num_kv_pairs, "mqar: key range [", c.key_begin,
                     ", ", c.key_end, ") has fewer than ", c.num_kv_pairs, " ids");
  SWARMT_CHECK_INPUT(c.value_begin >= 0 && c.value_end - c.value_begin >= c.num_kv_pairs, "mqar: value range [",
                     c.value_begin, ", ", c.value_end, ") has fewer than ", c.num_kv_pairs, " ids");
  SWARMT_CHECK_INPUT(c.key_end <= c.value_begin || c.value_end <= c.key_begin, "mqar: key range [", c.key_begin,
                     ", ", c.key_end, ") overlaps value range [", c.value_begin, ", ", c.value_end, ")");
  SWARMT_CHECK_INPUT(!c.random_non_queries || (c.noise_begin >= 0 && c.noise_end > c.noise_begin),
                     "mqar: noise range [", c.noise_begin, ", ", c.noise_end, ") is empty");
  SWARMT_CHECK_INPUT(c.filler_token >= 0, "mqar: filler_token must be >= 0 (got ", c.filler_token, ")");
  SWARMT_CHECK_INPUT(c.power_a > 0 && std::isfinite(c.power_a), "mqar: power_a must be > 0 (got ", c.power_a, ")");
}

namespace {

// k distinct indices of [0, weights.size()) drawn successively with probability proportional to the
// weights of the remaining ones (numpy's choice(replace=False, p=...)). Uses the equivalent
// Efraimidis-Spirakis form: keep the k largest log(u_i) / w_i.
std::vector<int64_t> weighted_sample_without_replacement(TaskRng& rng, const std::vector<double>& weights,
                                                         int64_t k) {
  std::vector<std::pair<double, int64_t>> keyed(weights.size());
  for (size_t i = 0; i < weights.size(); ++i) {
    double u = (static_cast<double>(rng.next_u64() >> 11) + 0.5) * 0x1.0p-53;  // in (0, 1)
    keyed[i] = {std::log(u) / weights[i], static_cast<int64_t>(i)};
  }
  std::partial_sort(keyed.begin(), keyed.begin() + k, keyed.end(),
                    [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<int64_t> out;
  for (int64_t i = 0; i < k; ++i) out.push_back(keyed[static_cast<size_t>(i)].second);
  return out;
}

}  // namespace

MqarExample generate_mqar_example(const MqarConfig& c, uint64_t seed) {
  validate_mqar_config(c);
  TaskRng rng(seed);
  const int64_t k = c.num_kv_pairs;
  std::vector<int64_t> keys, values;
  for (int64_t i : rng.sample_without_replacement(c.key_end - c.key_begin, k)) keys.push_back(c.key_begin + i);
  for (int64_t i : rng.sample_without_replacement(c.value_end - c.value_begin, k)) values.push_back(c.value_begin + i);

  const int64_t prefix = 2 * k * c.num_passes;
  MqarExample ex;
  ex.tokens.assign(static_cast<size_t>(c.seq_len), c.filler_token);
  ex.targets.assign(static_cast<size_t>(c.seq_len), kIgnoreTarget);
  for (int64_t pass = 0; pass < c.num_passes; ++pass) {
    for (int64_t j = 0; j < k; ++j) {
      ex.tokens[static_cast<size_t>(pass * 2 * k + 2 * j)] = keys[static_cast<size_t>(j)];
      ex.tokens[static_cast<size_t>(pass * 2 * k + 2 * j + 1)] = values[static_cast<size_t>(j)];
    }
  }
  // Query gaps: p(gap = i - 1) ~ a * i^(a - 1), i = 1..space; a << 1 favours short gaps (power law).
  const int64_t space = (c.seq_len - prefix) / 2;
  std::vector<double> weights(static_cast<size_t>(space));
  for (int64_t i = 1; i <= space; ++i) weights[static_cast<size_t>(i - 1)] = c.power_a * std::pow(static_cast<double>(i), c.power_a - 1.0);
  std::vector<int64_t> gaps = weighted_sample_without_replacement(rng, weights, k);

  std::vector<bool> is_query(static_cast<size_t>(c.seq_len), false);
  for (int64_t j = 0; j < k; ++j) {
    int64_t pos = prefix + 2 * gaps[static_cast<size_t>(j)];
    ex.tokens[static_cast<size_t>(pos)] = keys[static_cast<size_t>(j)];
    ex.targets[static_cast<size_t>(pos)] = values[static_cast<size_t>(j)];
    ex.query_positions.push_back(pos);
    is_query[static_cast<size_t>(pos)] = true;
  }
  if (c.random_non_queries) {
    for (int64_t p = prefix; p < c.seq_len; ++p)
      if (!is_query[static_cast<size_t>(p)]) ex.tokens[static_cast<size_t>(p)] = rng.uniform_int(c.noise_begin, c.noise_end - 1);
  }
  return ex;
}

// ---------------------------------------------------------------------------------------------------
// Passkey

namespace {

std::string repeated_filler(int64_t units) {
  std::string out;
  for (int64_t i = 0; i < units; ++i) {
    if (i) out += ' ';
    out += noise_filler();
  }
  return out;
}

std::string passkey_prompt(int64_t units, double depth_percent, const std::string& key) {
  const int64_t before = std::clamp<int64_t>(std::llround(static_cast<double>(units) * depth_percent / 100.0), 0, units);
  return "There is an important info hidden inside a lot of irrelevant text. Find it and memorize them. I will "
         "quiz you about the important information there.\n" +
         repeated_filler(before) + "\nThe pass key is " + key + ". Remember it. " + key + " is the pass key.\n" +
         repeated_filler(units - before) + "\nWhat is the pass key? The pass key is";
}

void validate_passkey_config(const PasskeyConfig& c) {
  SWARMT_CHECK_INPUT(c.filler_units >= 0, "passkey: filler_units must be >= 0 (got ", c.filler_units, ")");
  SWARMT_CHECK_INPUT(c.depth_percent >= 0 && c.depth_percent <= 100, "passkey: depth must be in [0, 100] (got ",
                     c.depth_percent, ")");
  SWARMT_CHECK_INPUT(c.key_min >= 0 && c.key_min <= c.key_max, "passkey: key range [", c.key_min, ", ", c.key_max,
                     "] is empty");
}

}  // namespace

PasskeyExample generate_passkey_example(const PasskeyConfig& config, uint64_t seed) {
  validate_passkey_config(config);
  TaskRng rng(seed);
  PasskeyExample ex;
  ex.answer = std::to_string(rng.uniform_int(config.key_min, config.key_max));
  ex.filler_units = config.filler_units;
  ex.depth_percent = config.depth_percent;
  ex.prompt = passkey_prompt(config.filler_units, config.depth_percent, ex.answer);
  return ex;
}

PasskeyExample generate_passkey_for_length(const PasskeyConfig& config, int64_t max_seq_length,
                                           int64_t tokens_to_generate, const TokenCounter& count_tokens,
                                           uint64_t seed) {
  validate_passkey_config(config);
  PasskeyExample ex = generate_passkey_example(config, seed);
  LengthFitOptions options;
  options.max_seq_length = max_seq_length;
  options.tokens_to_generate = tokens_to_generate;
  options.min_units = 1;
  options.first_probe = 25;
  LengthFit fit = fit_haystack_size(
      [&](int64_t units) { return passkey_prompt(units, config.depth_percent, ex.answer); }, count_tokens, options);
  ex.filler_units = fit.units;
  ex.prompt = passkey_prompt(fit.units, config.depth_percent, ex.answer);
  ex.token_count = fit.prompt_tokens;
  return ex;
}

}  // namespace swarmt::data
