// The id ranges of a recall probe on the command line (`--keys`, `--values`, `--filler`), shared by
// `swarmt eval recall` and `swarmt armt lookup`: by default the ranges of the recall task the model was
// trained on (train_config.json beside it), so that a model is probed with the vocabulary it learned.
#pragma once

#include <cstdint>
#include <string>

#include "swarmt/data/synthetic/distance_recall.h"

namespace swarmt::cli {

// "a:b" -> [a, b); empty keeps `begin`, `end`; BadInput naming `option` otherwise.
void parse_id_range(const std::string& text, const std::string& option, int64_t& begin, int64_t& end);

// From the training run beside `model_dir`, if any: the id ranges of its recall task into `vocabulary`
// and, when `training_length` is given and still 0, its sequence length.
void recall_defaults_from_training(const std::string& model_dir, data::RecallVocabulary& vocabulary,
                                   int64_t* training_length = nullptr);

// `vocabulary` with the ranges given on the command line (empty texts keep it), checked to be disjoint.
data::RecallVocabulary recall_vocabulary_from_args(data::RecallVocabulary vocabulary, const std::string& keys,
                                                   const std::string& values, const std::string& filler);

}  // namespace swarmt::cli
