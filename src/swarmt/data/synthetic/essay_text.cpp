#include "swarmt/data/synthetic/essay_text.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <set>

#include "swarmt/core/error.h"
#include "swarmt/core/json.h"

namespace fs = std::filesystem;

namespace swarmt::data {

std::string load_essay_directory(const std::string& directory) {
  std::error_code ec;
  SWARMT_CHECK_INPUT(fs::is_directory(directory, ec), directory, ": essay directory does not exist or is not a directory");
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(directory, ec)) {
    if (entry.is_regular_file(ec) && entry.path().extension() == ".txt") files.push_back(entry.path());
  }
  SWARMT_CHECK_INPUT(!ec, directory, ": cannot list the essay directory (", ec.message(), ")");
  SWARMT_CHECK_INPUT(!files.empty(), directory, ": essay directory has no .txt files");
  std::sort(files.begin(), files.end());
  std::string text;
  for (const auto& file : files) {
    if (!text.empty()) text += "\n";
    text += read_text_file(file.string());
  }
  SWARMT_CHECK_INPUT(!split_words(text).empty(), directory, ": the .txt files of the essay directory contain no words");
  return text;
}

std::vector<std::string> split_words(const std::string& text) {
  std::vector<std::string> words;
  size_t i = 0, n = text.size();
  auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; };
  while (i < n) {
    while (i < n && is_space(text[i])) ++i;
    size_t start = i;
    while (i < n && !is_space(text[i])) ++i;
    if (i > start) words.emplace_back(text, start, i - start);
  }
  return words;
}

namespace {

// Words that end with a period without ending the sentence (lowercase, without the final period).
const std::set<std::string>& abbreviations() {
  static const std::set<std::string> kAbbreviations = {
      "mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "vs", "etc", "e.g", "i.e", "inc", "ltd", "co", "corp",
      "no", "fig", "vol", "approx", "dept", "est", "gen", "gov", "mt", "jan", "feb", "mar", "apr", "jun",
      "jul", "aug", "sep", "sept", "oct", "nov", "dec", "u.s", "u.k", "a.m", "p.m", "cf", "al", "ed", "rev"};
  return kAbbreviations;
}

bool is_closing(char c) { return c == '"' || c == '\'' || c == ')' || c == ']' || c == '}'; }

// The token (run of non-space characters) that ends at position `end` (exclusive), lowercased, with
// leading opening quotes/brackets removed.
std::string token_before(const std::string& text, size_t end) {
  size_t start = end;
  while (start > 0 && text[start - 1] != ' ') --start;
  std::string token;
  for (size_t i = start; i < end; ++i) token += static_cast<char>(std::tolower(static_cast<unsigned char>(text[i])));
  while (!token.empty() && (token[0] == '"' || token[0] == '\'' || token[0] == '(' || token[0] == '[')) token.erase(0, 1);
  return token;
}

}  // namespace

std::vector<std::string> split_sentences(const std::string& text) {
  std::vector<std::string> sentences;
  const size_t n = text.size();
  size_t sentence_start = 0;
  size_t i = 0;
  while (i < n) {
    char c = text[i];
    if (c != '.' && c != '!' && c != '?') {
      ++i;
      continue;
    }
    // The terminal run: ".", "?!", "...", followed by closing quotes/brackets.
    size_t run_start = i;
    while (i < n && (text[i] == '.' || text[i] == '!' || text[i] == '?')) ++i;
    const size_t punct_end = i;
    while (i < n && is_closing(text[i])) ++i;
    if (i >= n || text[i] != ' ' || i + 1 >= n) continue;  // not followed by " X"
    unsigned char next = static_cast<unsigned char>(text[i + 1]);
    if (std::islower(next)) continue;  // "e.g. the", "3 p.m. and": the sentence goes on
    bool single_period = punct_end - run_start == 1 && text[run_start] == '.';
    if (single_period) {
      std::string token = token_before(text, run_start);
      bool initial = token.size() == 1 && std::isalpha(static_cast<unsigned char>(token[0]));
      if (initial || abbreviations().count(token)) continue;
    }
    sentences.emplace_back(text, sentence_start, i - sentence_start);
    sentence_start = i + 1;  // skip the separating space
    i = sentence_start;
  }
  if (sentence_start < n) sentences.emplace_back(text, sentence_start, n - sentence_start);
  return sentences;
}

}  // namespace swarmt::data
