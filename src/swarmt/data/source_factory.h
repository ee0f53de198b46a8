// Data sources from their JSON description (the "train" / "validation" objects of a training config):
//   {"type": "tokens", "path": "data/train.json"}            a token file (see token_file.h)
//   {"type": "synthetic", "tasks": [...], ...}               generated on the fly (synthetic_source.h)
//   {"type": "jsonl_qa", "path": "data/long_qa.jsonl"}       `swarmt data synth` output (long_context_dataset_source.h)
#pragma once

#include <memory>

#include "swarmt/core/json.h"
#include "swarmt/data/batch.h"
#include "swarmt/data/synthetic_source.h"
#include "swarmt/tokenizer/tokenizer.h"

namespace swarmt::data {

struct TextTokenizer {
  tokenizer::Tokenizer tokenizer;
  SyntheticSpecialIds ids;     // bos (if the model expects one), eos, pad
  std::string tokenizer_json;  // to copy into model directories
  std::string tokenizer_config_json;
};

// "byte": the built-in byte tokenizer; otherwise a directory with tokenizer.json (+ tokenizer_config.json).
TextTokenizer load_text_tokenizer(const std::string& spec);

// planned_samples: samples a training run will draw from the source (steps x batch size), for curricula
// over training, the first of them at index first_planned_sample; 0 for validation data (see SyntheticSource).
std::shared_ptr<const DataSource> make_data_source(const JsonView& view, const TextTokenizer& tokenizer,
                                                   int64_t sequence_length, uint64_t seed, int64_t planned_samples = 0,
                                                   int64_t first_planned_sample = 0);

}  // namespace swarmt::data
