#include "swarmt/data/long_context/long_context_dataset_haystack.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>

#include "swarmt/core/error.h"

namespace swarmt::data {

namespace {

// Sentences of a ProseCorpus are single-space normalised, so words = spaces + 1.
int64_t word_count(const std::string& sentence) {
  if (sentence.empty()) return 0;
  int64_t n = 1;
  for (char c : sentence) n += c == ' ';
  return n;
}

std::string first_words(const std::string& sentence, int64_t count) {
  size_t pos = 0;
  for (int64_t i = 0; i < count; ++i) {
    const size_t space = sentence.find(' ', pos);
    if (space == std::string::npos) return sentence;
    if (i + 1 == count) return sentence.substr(0, space);
    pos = space + 1;
  }
  return "";
}

struct Boundary {
  size_t passage;
  size_t sentence;     // inserts go before this sentence of the passage (== size: at its end)
  int64_t words_before;
};

}  // namespace

std::vector<std::string> lowercase_words(const std::string& sentence) {
  std::vector<std::string> words;
  std::string current;
  for (char c : sentence) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      current += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else if (!current.empty()) {
      words.push_back(std::move(current));
      current.clear();
    }
  }
  if (!current.empty()) words.push_back(std::move(current));
  return words;
}

ProseHaystack build_prose_haystack(const ProseCorpus& corpus, size_t first_passage, int64_t num_words,
                                   const std::vector<ProseInsert>& inserts,
                                   const std::function<bool(const std::string&)>& keep_sentence) {
  const size_t num_passages = corpus.passages.size();
  SWARMT_CHECK_INPUT(num_passages > 0, corpus.name, ": the corpus has no passages");
  SWARMT_CHECK(num_words >= 0);

  // 1. The background: whole kept sentences in corpus order until num_words (the last one cut).
  std::vector<std::vector<std::string>> passages;
  int64_t total = 0;
  size_t p = first_passage % num_passages;
  size_t passages_without_progress = 0;
  while (total < num_words) {
    std::vector<std::string> kept;
    for (const auto& sentence : corpus.passages[p]) {
      if (total >= num_words) break;
      if (!keep_sentence(sentence)) continue;
      const int64_t words = word_count(sentence);
      if (total + words <= num_words) {
        kept.push_back(sentence);
        total += words;
      } else {
        kept.push_back(first_words(sentence, num_words - total));
        total = num_words;
      }
    }
    if (kept.empty()) {
      SWARMT_CHECK_INPUT(++passages_without_progress <= num_passages, corpus.name,
                         ": no sentence of the corpus can serve as background (every one mentions an entity of the"
                         " example)");
    } else {
      passages_without_progress = 0;
      passages.push_back(std::move(kept));
    }
    p = (p + 1) % num_passages;
  }
  if (passages.empty()) passages.emplace_back();

  // 2. Each insert goes to the sentence boundary nearest to its depth (ties: the earlier boundary).
  std::vector<Boundary> boundaries;
  int64_t words_before = 0;
  for (size_t i = 0; i < passages.size(); ++i) {
    for (size_t s = 0; s <= passages[i].size(); ++s) {
      boundaries.push_back({i, s, words_before});
      if (s < passages[i].size()) words_before += word_count(passages[i][s]);
    }
  }
  std::vector<std::vector<std::vector<size_t>>> inserts_at(passages.size());  // [passage][boundary] -> inserts
  for (size_t i = 0; i < passages.size(); ++i) inserts_at[i].resize(passages[i].size() + 1);
  for (size_t k = 0; k < inserts.size(); ++k) {
    const double target = std::clamp(inserts[k].depth, 0.0, 100.0) / 100.0 * static_cast<double>(total);
    size_t best = 0;
    double best_distance = std::numeric_limits<double>::infinity();
    for (size_t b = 0; b < boundaries.size(); ++b) {
      const double distance = std::abs(static_cast<double>(boundaries[b].words_before) - target);
      if (distance < best_distance) {
        best_distance = distance;
        best = b;
      }
    }
    inserts_at[boundaries[best].passage][boundaries[best].sentence].push_back(k);
  }

  // 3. Render, recording where each insert starts.
  ProseHaystack haystack;
  std::vector<size_t> offsets(inserts.size(), 0);
  for (size_t i = 0; i < passages.size(); ++i) {
    if (i) haystack.text += "\n\n";
    bool first_in_passage = true;
    auto append = [&](const std::string& sentence) {
      if (!first_in_passage) haystack.text += ' ';
      first_in_passage = false;
      haystack.text += sentence;
    };
    for (size_t s = 0; s <= passages[i].size(); ++s) {
      for (size_t k : inserts_at[i][s]) {
        if (!first_in_passage) haystack.text += ' ';
        first_in_passage = false;
        offsets[k] = haystack.text.size();
        haystack.text += inserts[k].sentence;
      }
      if (s < passages[i].size()) append(passages[i][s]);
    }
  }
  const double length = std::max<double>(1.0, static_cast<double>(haystack.text.size()));
  for (size_t off : offsets) haystack.depths.push_back(100.0 * static_cast<double>(off) / length);
  return haystack;
}

}  // namespace swarmt::data
