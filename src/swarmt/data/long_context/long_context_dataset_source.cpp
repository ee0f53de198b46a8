#include "swarmt/data/long_context/long_context_dataset_source.h"

#include <algorithm>
#include <cctype>
#include <fstream>

#include "swarmt/core/error.h"
#include "swarmt/data/long_context/jsonl.h"
#include "swarmt/data/synthetic/synthetic_tasks_random.h"

namespace swarmt::data {

std::vector<LongContextExample> read_long_context_examples(const std::string& path) {
  JsonlReader reader(path);
  std::vector<LongContextExample> examples;
  Json record;
  while (reader.next(record)) examples.push_back(example_from_json(record, reader.where()));
  SWARMT_CHECK_INPUT(!examples.empty(), path, ": the file has no examples");
  return examples;
}

LongContextSource::LongContextSource(const std::string& path, tokenizer::Tokenizer tokenizer, SyntheticSpecialIds ids,
                                     int64_t sequence_length, uint64_t seed, bool answer_only_loss)
    : path_(path),
      tokenizer_(std::move(tokenizer)),
      ids_(ids),
      sequence_length_(sequence_length),
      seed_(seed),
      answer_only_loss_(answer_only_loss) {
  SWARMT_CHECK_INPUT(sequence_length_ >= 2, "jsonl_qa: sequence length must be at least 2 (got ", sequence_length_, ")");
  std::ifstream in(path_, std::ios::binary);
  SWARMT_CHECK_INPUT(in.is_open(), path_, ": cannot open file for reading");
  // One validating pass (through the same reader the samples use), remembering where each line starts.
  std::string line;
  uint64_t offset = 0;
  int64_t line_number = 0;
  while (std::getline(in, line)) {
    ++line_number;
    const uint64_t start = offset;
    offset += line.size() + 1;
    size_t skip = line_number == 1 && line.compare(0, 3, "\xEF\xBB\xBF") == 0 ? 3 : 0;
    if (line.find_first_not_of(" \t\r", skip) == std::string::npos) continue;
    example_from_json(parse_jsonl_object(line.substr(skip), str_cat(path_, ":", line_number)),
                      str_cat(path_, ":", line_number));
    offsets_.push_back(start + skip);
    line_numbers_.push_back(line_number);
  }
  SWARMT_CHECK_INPUT(!in.bad(), path_, ": read error after line ", line_number);
  SWARMT_CHECK_INPUT(!offsets_.empty(), path_, ": the file has no examples");
}

std::shared_ptr<const LongContextSource> LongContextSource::from_config(const JsonView& v, tokenizer::Tokenizer tokenizer,
                                                                        SyntheticSpecialIds ids, int64_t sequence_length,
                                                                        uint64_t default_seed) {
  v.reject_unknown_keys({"type", "path", "seed", "loss"});
  const std::string loss = v.get_string("loss", "answer");
  SWARMT_CHECK_INPUT(loss == "answer" || loss == "all", v.describe("loss"), " must be \"answer\" or \"all\" (got \"",
                     loss, "\")");
  return std::make_shared<LongContextSource>(v.get_string("path"), std::move(tokenizer), ids, sequence_length,
                                             static_cast<uint64_t>(v.get_int("seed", static_cast<int64_t>(default_seed))),
                                             loss == "answer");
}

LongContextExample LongContextSource::example(int64_t i) const {
  SWARMT_CHECK(i >= 0 && i < num_examples(), "example index ", i, " out of range");
  std::ifstream in(path_, std::ios::binary);
  SWARMT_CHECK_INPUT(in.is_open(), path_, ": cannot open file for reading");
  in.seekg(static_cast<std::streamoff>(offsets_[static_cast<size_t>(i)]));
  std::string line;
  std::getline(in, line);
  const std::string where = str_cat(path_, ":", line_numbers_[static_cast<size_t>(i)]);
  // The file was valid when the source was made; if it changed since, this still fails cleanly.
  return example_from_json(parse_jsonl_object(line, where), where);
}

int64_t LongContextSource::example_index(int64_t index) const {
  SWARMT_CHECK(index >= 0, "sample index must be non-negative");
  const int64_t n = num_examples();
  const int64_t pass = index / n;
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = orders_.find(pass);
  if (it == orders_.end()) {
    std::vector<int64_t> order(static_cast<size_t>(n));
    for (int64_t k = 0; k < n; ++k) order[static_cast<size_t>(k)] = k;
    TaskRng rng(mix_seed(seed_, static_cast<uint64_t>(pass)));
    rng.shuffle(order);
    if (orders_.size() >= 4) orders_.erase(orders_.begin());  // trainers move forward; keep a few passes
    it = orders_.emplace(pass, std::move(order)).first;
  }
  return it->second[static_cast<size_t>(index % n)];
}

Sample LongContextSource::sample(int64_t index) const {
  const LongContextExample e = example(example_index(index));
  QaTokens qa = tokenize_qa(tokenizer_, ids_, qa_prompt(e.context, e.question), e.answer);
  std::vector<int64_t>& seq = qa.ids;
  const int64_t N = sequence_length_;
  // N inputs and their N next-token targets use up to N + 1 tokens. Cut the context from its start
  // (keeping <bos>), never the question or the answer; an over-long answer loses its end.
  const size_t limit = static_cast<size_t>(N + 1);
  if (seq.size() > limit) {
    const size_t keep_front = ids_.bos >= 0 ? 1 : 0;
    const size_t removable = qa.answer_begin > keep_front ? qa.answer_begin - keep_front : 0;
    const size_t remove = std::min(seq.size() - limit, removable);
    seq.erase(seq.begin() + static_cast<std::ptrdiff_t>(keep_front),
              seq.begin() + static_cast<std::ptrdiff_t>(keep_front + remove));
    qa.answer_begin -= remove;
    if (seq.size() > limit) seq.resize(limit);
  }
  Sample s;
  s.tokens.assign(static_cast<size_t>(N), ids_.pad);
  s.targets.assign(static_cast<size_t>(N), kIgnoreIndex);
  s.doc_ids.assign(static_cast<size_t>(N), 1);
  const size_t used = std::min(seq.size(), static_cast<size_t>(N));
  for (size_t t = 0; t < used; ++t) {
    s.tokens[t] = seq[t];
    s.doc_ids[t] = 0;
    if (t + 1 < seq.size() && (!answer_only_loss_ || t + 1 >= qa.answer_begin)) s.targets[t] = seq[t + 1];
  }
  return s;
}

std::string LongContextSource::describe() const {
  return str_cat("jsonl_qa ", path_, " (", num_examples(), " examples, loss on ", answer_only_loss_ ? "answers" : "all tokens",
                 ")");
}

// ---------------------------------------------------------------------------------------------------

std::vector<QaEvalItem> read_qa_eval_items(const std::string& path) {
  std::vector<QaEvalItem> items;
  for (auto& e : read_long_context_examples(path)) {
    QaEvalItem item;
    item.id = e.id;
    item.task = e.task;
    item.bucket = e.bucket;
    item.length_tokens = e.length_tokens;
    item.depth = e.depth;
    item.prompt = qa_prompt(e.context, e.question);
    item.answers = {e.answer};
    items.push_back(std::move(item));
  }
  return items;
}

namespace {

std::string normalise_answer(std::string text, bool first_line_only) {
  if (first_line_only) text = text.substr(0, text.find('\n'));
  auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (!text.empty() && blank(text.back())) text.pop_back();
  size_t start = 0;
  while (start < text.size() && blank(text[start])) ++start;
  text = text.substr(start);
  if (!text.empty() && text.back() == '.') text.pop_back();
  for (auto& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

}  // namespace

bool qa_exact_match(const std::string& prediction, const std::string& answer) {
  return normalise_answer(prediction, true) == normalise_answer(answer, false);
}

bool qa_contains_answer(const std::string& prediction, const std::string& answer) {
  const std::string a = normalise_answer(answer, false);
  return !a.empty() && normalise_answer(prediction, true).find(a) != std::string::npos;
}

}  // namespace swarmt::data
