#include "swarmt/data/long_context/long_context_dataset.h"

#include <cctype>
#include <cmath>
#include <map>

#include "swarmt/core/error.h"
#include "swarmt/core/memory_budget.h"

namespace swarmt::data {

std::string qa_prompt(const std::string& context, const std::string& question) { return context + "\n\n" + question; }

std::string qa_answer_continuation(const std::string& answer) { return " " + answer; }

std::string example_to_jsonl(const LongContextExample& e) {
  nlohmann::ordered_json j;
  j["id"] = e.id;
  j["task"] = e.task;
  j["bucket"] = e.bucket;
  j["length_tokens"] = e.length_tokens;
  j["context"] = e.context;
  j["question"] = e.question;
  j["answer"] = e.answer;
  j["depth"] = std::round(e.depth * 100.0) / 100.0;
  return j.dump();
}

LongContextExample example_from_json(const Json& record, const std::string& where) {
  JsonView v(record, where);
  LongContextExample e;
  e.id = v.get_string("id");
  e.task = v.get_string("task");
  e.bucket = v.get_string("bucket");
  e.length_tokens = v.get_int_in("length_tokens", 0, int64_t{1} << 40);
  e.context = v.get_string("context");
  e.question = v.get_string("question");
  e.answer = v.get_string("answer");
  e.depth = v.get_number("depth");
  SWARMT_CHECK_INPUT(e.depth >= 0 && e.depth <= 100, v.describe("depth"), " must be a percentage in [0, 100] (got ",
                     e.depth, ")");
  SWARMT_CHECK_INPUT(!e.answer.empty(), v.describe("answer"), " must not be empty");
  return e;
}

// ---------------------------------------------------------------------------------------------------

QaTokens tokenize_qa(const tokenizer::Tokenizer& tokenizer, const SyntheticSpecialIds& ids, const std::string& prompt,
                     const std::string& answer) {
  QaTokens t;
  const auto prompt_ids = tokenizer.encode(prompt, false);
  const auto answer_ids = tokenizer.encode(qa_answer_continuation(answer), false);
  t.ids.reserve(prompt_ids.size() + answer_ids.size() + 2);
  if (ids.bos >= 0) t.ids.push_back(ids.bos);
  t.ids.insert(t.ids.end(), prompt_ids.begin(), prompt_ids.end());
  t.answer_begin = t.ids.size();
  t.ids.insert(t.ids.end(), answer_ids.begin(), answer_ids.end());
  if (ids.eos >= 0) t.ids.push_back(ids.eos);
  return t;
}

QaLengthCounter make_qa_length_counter(const tokenizer::Tokenizer& tokenizer, const SyntheticSpecialIds& ids) {
  QaLengthCounter c;
  const int64_t bos = ids.bos >= 0 ? 1 : 0, eos = ids.eos >= 0 ? 1 : 0;
  c.prompt_tokens = [tokenizer, bos](const std::string& prompt) {
    return bos + static_cast<int64_t>(tokenizer.encode(prompt, false).size());
  };
  c.answer_tokens = [tokenizer, eos](const std::string& answer) {
    return static_cast<int64_t>(tokenizer.encode(qa_answer_continuation(answer), false).size()) + eos;
  };
  return c;
}

FittedContext fit_context(const std::function<ContextDraft(int64_t)>& build, const std::string& question,
                          const std::string& answer, int64_t target_tokens, const QaLengthCounter& counter) {
  // The search calls the builder a handful of times; keep the drafts so the winner is not rebuilt.
  std::map<int64_t, ContextDraft> drafts;
  auto prompt_of = [&](int64_t units) {
    auto it = drafts.find(units);
    if (it == drafts.end()) it = drafts.emplace(units, build(units)).first;
    return qa_prompt(it->second.context, question);
  };
  LengthFitOptions options;
  options.max_seq_length = target_tokens;
  options.tokens_to_generate = counter.answer_tokens(answer);
  options.min_units = 1;
  SWARMT_CHECK_INPUT(options.tokens_to_generate < target_tokens, "target length ", target_tokens,
                     " tokens is too small: the answer alone takes ", options.tokens_to_generate);
  LengthFit fit = fit_haystack_size(prompt_of, counter.prompt_tokens, options);
  FittedContext result;
  prompt_of(fit.units);
  result.draft = drafts.at(fit.units);
  result.units = fit.units;
  result.length_tokens = fit.prompt_tokens + options.tokens_to_generate;
  return result;
}

// ---------------------------------------------------------------------------------------------------

int64_t parse_token_count(const std::string& text, const std::string& option) {
  std::string digits = text;
  int64_t scale = 1;
  if (!digits.empty()) {
    const char suffix = static_cast<char>(std::tolower(static_cast<unsigned char>(digits.back())));
    if (suffix == 'k') scale = 1024;
    if (suffix == 'm') scale = 1024 * 1024;
    if (scale != 1) digits.pop_back();
  }
  bool ok = !digits.empty() && digits.size() <= 12;
  for (char c : digits) ok = ok && std::isdigit(static_cast<unsigned char>(c));
  SWARMT_CHECK_INPUT(ok, option, ": '", text, "' is not a token count (e.g. 4096, 4k)");
  const int64_t value = std::stoll(digits) * scale;
  SWARMT_CHECK_INPUT(value > 0 && value <= (int64_t{1} << 32), option, ": '", text, "' must be in [1, 4G] tokens");
  // An example of `value` tokens is built in memory (its text and the ids counting it) before it is written.
  check_count_fits(value, static_cast<double>(kMinBytesPerContextToken), option, "token", "choose shorter lengths");
  return value;
}

namespace {

std::vector<std::string> split_on(const std::string& text, char sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (;;) {
    size_t end = text.find(sep, start);
    parts.push_back(text.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) return parts;
    start = end + 1;
  }
}

}  // namespace

std::vector<LengthBucket> default_length_buckets(int64_t segment_length) {
  SWARMT_CHECK_INPUT(segment_length > 0 && segment_length <= (int64_t{1} << 26), "--segment-length: ", segment_length,
                     " is not a segment length in [1, 64M] tokens");
  check_count_fits(64 * segment_length, static_cast<double>(kMinBytesPerContextToken), "--segment-length", "token",
                   "the longest bucket (ood) is 64 segments long; choose a shorter segment length");
  const int64_t s = segment_length;
  return {{"in", 2 * s, 8 * s}, {"long", 16 * s, 32 * s}, {"ood", 64 * s, 64 * s}};
}

std::vector<LengthBucket> parse_length_buckets(const std::string& spec, const std::string& option) {
  std::vector<LengthBucket> buckets;
  for (const auto& item : split_on(spec, ',')) {
    const auto colon = item.find(':');
    SWARMT_CHECK_INPUT(colon != std::string::npos && colon > 0, option, ": '", item,
                       "' must be NAME:LENGTH or NAME:MIN-MAX (e.g. in:2048,long:8k-16k)");
    LengthBucket b;
    b.name = item.substr(0, colon);
    const auto range = split_on(item.substr(colon + 1), '-');
    SWARMT_CHECK_INPUT(range.size() <= 2, option, ": '", item, "' has more than one '-'");
    b.min_tokens = parse_token_count(range[0], option);
    b.max_tokens = range.size() == 2 ? parse_token_count(range[1], option) : b.min_tokens;
    SWARMT_CHECK_INPUT(b.min_tokens <= b.max_tokens, option, ": '", item, "' has MIN > MAX");
    for (const auto& other : buckets)
      SWARMT_CHECK_INPUT(other.name != b.name, option, ": bucket '", b.name, "' is named twice");
    buckets.push_back(b);
  }
  return buckets;
}

std::vector<LengthBucket> parse_length_list(const std::string& spec, const std::string& option) {
  std::vector<LengthBucket> buckets;
  for (const auto& item : split_on(spec, ',')) {
    const int64_t n = parse_token_count(item, option);
    for (const auto& other : buckets)
      SWARMT_CHECK_INPUT(other.name != item, option, ": length '", item, "' is listed twice");
    buckets.push_back({item, n, n});
  }
  return buckets;
}

int64_t count_occurrences(const std::string& text, const std::string& needle) {
  if (needle.empty()) return 0;
  int64_t count = 0;
  for (size_t pos = text.find(needle); pos != std::string::npos; pos = text.find(needle, pos + 1)) ++count;
  return count;
}

int64_t count_word_occurrences(const std::string& text, const std::string& word) {
  if (word.empty()) return 0;
  auto is_word_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; };
  int64_t count = 0;
  for (size_t pos = text.find(word); pos != std::string::npos; pos = text.find(word, pos + 1)) {
    const size_t end = pos + word.size();
    if ((pos == 0 || !is_word_char(text[pos - 1])) && (end == text.size() || !is_word_char(text[end]))) ++count;
  }
  return count;
}

}  // namespace swarmt::data
