#include "swarmt/data/synthetic_source.h"

#include <algorithm>

#include "swarmt/core/error.h"
#include "swarmt/core/random.h"
#include "swarmt/data/synthetic/distance_recall.h"
#include "swarmt/data/synthetic/essay_text.h"
#include "swarmt/data/synthetic/niah.h"
#include "swarmt/data/synthetic/synthetic_tasks.h"

namespace swarmt::data {

namespace {

// A prompt/answer pair in text, or an id sequence with its own targets (MQAR).
struct Generated {
  std::string prompt;
  std::string answer;                 // text generated after the prompt (" 1234567.")
  std::vector<int64_t> ids;           // token-level tasks: inputs + one extra token (length N + 1)
  std::vector<int64_t> targets;       // token-level tasks: targets for ids[0..N)
  bool lm = false;                    // language modelling: loss on every token
};

}  // namespace

struct SyntheticSource::Task {
  virtual ~Task() = default;
  // progress: the sample's place in training, in [0, 1); < 0 when unknown (validation data).
  virtual Generated generate(uint64_t seed, int64_t budget, double progress) const = 0;
  std::string name;
};

namespace {

std::vector<int64_t> lengths_of(const JsonView& v, int64_t sequence_length) {
  if (!v.has("lengths")) return {sequence_length};
  auto lengths = v.get_int_list("lengths");
  SWARMT_CHECK_INPUT(!lengths.empty(), v.describe("lengths"), " must not be empty");
  for (auto l : lengths)
    SWARMT_CHECK_INPUT(l >= 16 && l <= sequence_length, v.describe("lengths"), " entries must be in [16, ",
                       sequence_length, "] (the sequence length); got ", l);
  return lengths;
}

class NiahTask : public SyntheticSource::Task {
 public:
  // RULER keeps 128 tokens free for the answer; for training, the answer tokens are few.
  static NiahTaskConfig training_variant(const JsonView& v) {
    auto config = niah_variant(v.get_string("variant", "niah_single_1"));
    config.tokens_to_generate = v.get_int_in("answer_tokens", 16, 1, 1024);
    return config;
  }

  NiahTask(const JsonView& v, const TokenCounter& counter, int64_t sequence_length, uint64_t seed)
      : generator_(training_variant(v), seed),
        counter_(counter),
        lengths_(lengths_of(v, sequence_length)) {
    name = "niah:" + generator_.task().name;
  }
  Generated generate(uint64_t seed, int64_t budget, double) const override {
    const int64_t length = lengths_[mix_key(seed, 1) % lengths_.size()];
    const int64_t target = std::min(length, budget);
    data::LengthFit fit = fit_for(target);
    auto prompt = generator_.build_prompt(fit.units, seed);
    Generated g;
    g.prompt = prompt.text;
    std::string joined;
    for (size_t i = 0; i < prompt.answers.size(); ++i) joined += (i ? ", " : "") + prompt.answers[i];
    g.answer = " " + joined + ".";
    return g;
  }

 private:
  data::LengthFit fit_for(int64_t length) const {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = fits_.find(length);
    if (it != fits_.end()) return it->second;
    // tokens_to_generate of the task is the room kept free for the answer.
    auto fit = generator_.fit_length(length, counter_);
    fits_[length] = fit;
    return fit;
  }
  NiahGenerator generator_;
  TokenCounter counter_;
  std::vector<int64_t> lengths_;
  mutable std::mutex mutex_;
  mutable std::map<int64_t, data::LengthFit> fits_;
};

class PasskeyTask : public SyntheticSource::Task {
 public:
  PasskeyTask(const JsonView& v, const TokenCounter& counter, int64_t sequence_length)
      : counter_(counter), lengths_(lengths_of(v, sequence_length)) {
    name = "passkey";
    answer_tokens_ = v.get_int_in("answer_tokens", 16, 1, 1024);
  }
  Generated generate(uint64_t seed, int64_t budget, double) const override {
    const int64_t length = std::min(budget, lengths_[mix_key(seed, 1) % lengths_.size()]);
    PasskeyConfig config;
    config.depth_percent = uniform_from_key(mix_key(seed, 2)) * 100.0;
    int64_t units = units_for(length, config);
    config.filler_units = units;
    auto example = generate_passkey_example(config, seed);
    Generated g;
    g.prompt = example.prompt;
    g.answer = " " + example.answer + ".";
    return g;
  }

 private:
  int64_t units_for(int64_t length, const PasskeyConfig& config) const {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = units_.find(length);
    if (it != units_.end()) return it->second;
    auto example = generate_passkey_for_length(config, length, answer_tokens_, counter_, /*seed=*/0);
    units_[length] = example.filler_units;
    return example.filler_units;
  }
  TokenCounter counter_;
  std::vector<int64_t> lengths_;
  int64_t answer_tokens_;
  mutable std::mutex mutex_;
  mutable std::map<int64_t, int64_t> units_;
};

class MqarTask : public SyntheticSource::Task {
 public:
  MqarTask(const JsonView& v, int64_t sequence_length, int64_t vocab_size) {
    name = "mqar";
    const int64_t begin = v.get_int_in("vocab_begin", 0, 0, vocab_size - 1);
    const int64_t end = v.get_int_in("vocab_end", std::min<int64_t>(vocab_size, 256), begin + 4, vocab_size);
    const int64_t span = end - begin;
    config_ = MqarConfig::zoology(span, sequence_length + (sequence_length % 2), v.get_int_in("num_kv_pairs", 8, 1, 1 << 20));
    config_.key_begin += begin;
    config_.key_end += begin;
    config_.value_begin += begin;
    config_.value_end += begin;
    config_.noise_begin += begin;
    config_.noise_end += begin;
    config_.filler_token += begin;
    validate_mqar_config(config_);
  }
  Generated generate(uint64_t seed, int64_t, double) const override {
    auto example = generate_mqar_example(config_, seed);
    Generated g;
    g.ids = example.tokens;
    g.targets = example.targets;
    return g;
  }

 private:
  MqarConfig config_;
};

class RecallTask : public SyntheticSource::Task {
 public:
  RecallTask(const JsonView& v, int64_t sequence_length, int64_t vocab_size)
      : config_(recall_training_config_from_json(v, vocab_size)), sequence_length_(sequence_length) {
    name = "recall";
    validate_recall_training_config(config_, sequence_length, v.describe("task"));
  }
  Generated generate(uint64_t seed, int64_t, double progress) const override {
    auto sequence = generate_recall_sequence(config_, sequence_length_, config_.pairs_at(progress), seed);
    Generated g;
    g.ids = std::move(sequence.tokens);
    g.targets = std::move(sequence.targets);
    return g;
  }

 private:
  RecallTrainingConfig config_;
  int64_t sequence_length_;
};

class EssayTask : public SyntheticSource::Task {
 public:
  EssayTask() { name = "essay"; }
  Generated generate(uint64_t seed, int64_t budget, double) const override {
    const auto& words = builtin_essay_words();
    // Enough words for the budget at any tokenizer (bytes are the worst case: ~6 per word).
    const int64_t n = std::min<int64_t>(static_cast<int64_t>(words.size()) - 1, budget + 8);
    const int64_t start = static_cast<int64_t>(mix_key(seed, 3) % static_cast<uint64_t>(words.size() - n));
    Generated g;
    for (int64_t i = 0; i < n; ++i) g.prompt += (i ? " " : "") + words[start + i];
    g.lm = true;
    return g;
  }
};

}  // namespace

SyntheticSource::~SyntheticSource() = default;

SyntheticSource::SyntheticSource(const JsonView& v, tokenizer::Tokenizer tokenizer, SyntheticSpecialIds ids,
                                 int64_t sequence_length, uint64_t default_seed, int64_t planned_samples,
                                 int64_t first_planned_sample)
    : tokenizer_(std::move(tokenizer)),
      ids_(ids),
      sequence_length_(sequence_length),
      planned_samples_(planned_samples),
      first_planned_sample_(first_planned_sample) {
  v.reject_unknown_keys({"type", "seed", "loss", "tasks"});
  seed_ = static_cast<uint64_t>(v.get_int("seed", static_cast<int64_t>(default_seed)));
  const std::string loss = v.get_string("loss", "all");
  SWARMT_CHECK_INPUT(loss == "all" || loss == "answer", v.describe("loss"), " must be \"all\" or \"answer\"");
  answer_only_loss_ = loss == "answer";
  const size_t num_tasks = v.list_size("tasks");
  SWARMT_CHECK_INPUT(num_tasks > 0, v.describe("tasks"), " must not be empty");
  const bool with_bos = ids_.bos >= 0;
  tokenizer::Tokenizer tok = tokenizer_;
  TokenCounter counter = [tok, with_bos](const std::string& text) {
    return static_cast<int64_t>(tok.encode(text, false).size()) + (with_bos ? 1 : 0);
  };
  double total = 0;
  for (size_t i = 0; i < num_tasks; ++i) {
    JsonView t = v.list_object("tasks", i);
    const std::string kind = t.get_string("task");
    const double weight = t.get_number("weight", 1.0);
    SWARMT_CHECK_INPUT(weight > 0, t.describe("weight"), " must be positive");
    if (kind == "niah") {
      t.reject_unknown_keys({"task", "weight", "variant", "lengths", "answer_tokens"});
      tasks_.push_back(std::make_unique<NiahTask>(t, counter, sequence_length_, mix_key(seed_, i)));
    } else if (kind == "passkey") {
      t.reject_unknown_keys({"task", "weight", "lengths", "answer_tokens"});
      tasks_.push_back(std::make_unique<PasskeyTask>(t, counter, sequence_length_));
    } else if (kind == "mqar") {
      t.reject_unknown_keys({"task", "weight", "num_kv_pairs", "vocab_begin", "vocab_end"});
      tasks_.push_back(std::make_unique<MqarTask>(t, sequence_length_, tokenizer_.vocab_size()));
    } else if (kind == "recall") {
      t.reject_unknown_keys({"task", "weight", "pairs", "distances", "queries_per_pair", "rewrites", "keys", "values", "filler",
                            "layout", "gap", "shuffle_questions", "distinct_values", "hidden_answers"});
      tasks_.push_back(std::make_unique<RecallTask>(t, sequence_length_, tokenizer_.vocab_size()));
    } else if (kind == "essay") {
      t.reject_unknown_keys({"task", "weight"});
      tasks_.push_back(std::make_unique<EssayTask>());
    } else {
      throw_input_error(t.describe("task"), " '", kind, "' is not a synthetic task (niah, passkey, mqar, recall, essay)");
    }
    total += weight;
    cumulative_weights_.push_back(total);
  }
  for (auto& w : cumulative_weights_) w /= total;
}

Sample SyntheticSource::sample(int64_t index) const {
  const uint64_t key = mix_key(seed_, static_cast<uint64_t>(index));
  const double u = uniform_from_key(key);
  size_t which = std::lower_bound(cumulative_weights_.begin(), cumulative_weights_.end(), u) - cumulative_weights_.begin();
  which = std::min(which, tasks_.size() - 1);
  const Task& task = *tasks_[which];
  const int64_t N = sequence_length_;
  const double progress =
      planned_samples_ > 0
          ? std::clamp(static_cast<double>(index - first_planned_sample_) / static_cast<double>(planned_samples_), 0.0, 1.0)
          : -1.0;
  Generated g = task.generate(mix_key(key, 7), N, progress);

  Sample s;
  s.tokens.assign(N, ids_.pad);
  s.targets.assign(N, kIgnoreIndex);
  s.doc_ids.assign(N, 0);
  if (!g.ids.empty()) {  // token-level task (MQAR, recall)
    for (int64_t t = 0; t < N; ++t) {
      s.tokens[t] = g.ids[t];
      s.targets[t] = g.targets[t];
    }
    return s;
  }
  std::vector<int64_t> seq;
  if (ids_.bos >= 0) seq.push_back(ids_.bos);
  for (int32_t id : tokenizer_.encode(g.prompt, false)) seq.push_back(id);
  const size_t answer_begin = seq.size();
  if (!g.lm) {
    for (int32_t id : tokenizer_.encode(g.answer, false)) seq.push_back(id);
    if (ids_.eos >= 0) seq.push_back(ids_.eos);
  }
  // Sequence of N + 1 tokens: inputs are seq[0..N), targets seq[1..N]. Text that does not fit is cut
  // (the fit leaves room, so only the language-modelling task is ever cut).
  const int64_t used = std::min<int64_t>(static_cast<int64_t>(seq.size()), N + 1);
  for (int64_t t = 0; t < used && t < N; ++t) s.tokens[t] = seq[t];
  for (int64_t t = 0; t + 1 < used; ++t) {
    const bool is_answer = static_cast<size_t>(t + 1) >= answer_begin;
    if (g.lm || !answer_only_loss_ || is_answer) s.targets[t] = seq[t + 1];
  }
  for (int64_t t = std::max<int64_t>(used, 1); t < N; ++t) s.doc_ids[t] = 1;  // padding is its own document
  return s;
}

std::string SyntheticSource::describe() const {
  std::string names;
  for (const auto& t : tasks_) names += (names.empty() ? "" : ", ") + t->name;
  return str_cat("synthetic (", names, "), sequences of ", sequence_length_, ", seed ", seed_);
}

}  // namespace swarmt::data
