// Synthetic long-context tasks that need no external data:
//
//  * MQAR (multi-query associative recall, Zoology, arXiv 2312.04927, `zoology/data/multiquery_ar.py`):
//    token-level; k key-value pairs, then each key queried once at a power-law distributed distance;
//    the model must emit the value at each query. Returns token ids and targets (-100 = ignored).
//  * Passkey retrieval (landmark attention / LongLoRA): a 5-digit-ish key hidden at a chosen depth in
//    the repeated noise filler; text plus the expected answer.
//
// Everything is deterministic from a seed (TaskRng: std::mt19937_64 with our own distributions).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "swarmt/data/synthetic/synthetic_tasks_length_fit.h"

namespace swarmt::data {

// The target value of positions that carry no loss (PyTorch's ignore_index convention).
constexpr int64_t kIgnoreTarget = -100;

// RULER's and the passkey test's noise filler: five short sentences, one "unit" of noise haystack.
const std::string& noise_filler();

// ---------------------------------------------------------------------------------------------------
// MQAR

struct MqarConfig {
  int64_t seq_len = 64;           // input length (even)
  int64_t num_kv_pairs = 4;       // distinct keys, each queried once
  int64_t num_passes = 1;         // times the key-value prefix is repeated (JRT-style); 1 = Zoology
  int64_t key_begin = 1;          // keys are drawn from [key_begin, key_end)
  int64_t key_end = 4096;
  int64_t value_begin = 4096;     // values are drawn from [value_begin, value_end)
  int64_t value_end = 8192;
  bool random_non_queries = true; // non-query slots after the prefix: random tokens (else filler_token)
  int64_t noise_begin = 0;        // random non-query tokens are drawn from [noise_begin, noise_end)
  int64_t noise_end = 8192;
  int64_t filler_token = 0;
  double power_a = 0.01;          // gap distribution p(gap = i - 1) ~ a * i^(a - 1), i = 1..space

  // Zoology's layout for a vocabulary of V ids: keys [1, V/2), values [V/2, V), noise [0, V), filler 0.
  static MqarConfig zoology(int64_t vocab_size, int64_t seq_len, int64_t num_kv_pairs);
};

struct MqarExample {
  std::vector<int64_t> tokens;           // [seq_len] input ids
  std::vector<int64_t> targets;          // [seq_len] value id at each query position, kIgnoreTarget elsewhere
  std::vector<int64_t> query_positions;  // [num_kv_pairs] positions of the query keys, in key order
};

// Throws BadInput naming the field if the configuration is impossible (odd length, prefix + queries
// longer than seq_len, too few ids for distinct keys/values, ...).
void validate_mqar_config(const MqarConfig& config);

// One example. Layout (num_passes = 1): k1 v1 k2 v2 ... kK vK | query region of seq_len - 2K slots,
// where key j sits at offset 2 * gap_j (gaps distinct, power-law distributed) and its target there is
// v_j; the slot after each query key is not the value (it is filler or random), as in Zoology.
MqarExample generate_mqar_example(const MqarConfig& config, uint64_t seed);

// ---------------------------------------------------------------------------------------------------
// Passkey retrieval

struct PasskeyConfig {
  int64_t filler_units = 100;   // repetitions of noise_filler() (joined with " "), before + after the key
  double depth_percent = 50.0;  // share of the filler placed before the key line, in percent
  int64_t key_min = 1;          // the key is uniform in [key_min, key_max]
  int64_t key_max = 50000;
};

struct PasskeyExample {
  std::string prompt;   // ends with "What is the pass key? The pass key is"
  std::string answer;   // the key as decimal text
  int64_t filler_units = 0;
  double depth_percent = 0;
  int64_t token_count = -1;  // tokens of the prompt when generated for a length, else -1
};

// The classic prompt, lines joined with "\n":
//   There is an important info hidden inside a lot of irrelevant text. Find it and memorize them. I will
//   quiz you about the important information there.
//   <filler prefix>
//   The pass key is K. Remember it. K is the pass key.
//   <filler suffix>
//   What is the pass key? The pass key is
PasskeyExample generate_passkey_example(const PasskeyConfig& config, uint64_t seed);

// The same, with filler_units fitted so that tokens(prompt) + tokens_to_generate <= max_seq_length
// (largest such size).
PasskeyExample generate_passkey_for_length(const PasskeyConfig& config, int64_t max_seq_length,
                                           int64_t tokens_to_generate, const TokenCounter& count_tokens,
                                           uint64_t seed);

}  // namespace swarmt::data
