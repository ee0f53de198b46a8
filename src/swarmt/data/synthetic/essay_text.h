// Essay text for the `essay` haystacks of the RULER NIAH tasks.
//
// RULER's essay haystack is the Paul Graham essays, which must be downloaded. swarmt instead ships a
// generator of essay-like English prose (builtin_essay_text: our own grammar and vocabulary, fully
// deterministic, > 1.5 MB, enough for 131k-token prompts without repeating), and reads any directory of
// .txt files the user names (load_essay_directory), e.g. the real essays.
//
// The text is used the way RULER uses it: whitespace-normalised words (split_words), the first N words
// joined with single spaces, then split into sentences (split_sentences, a rule-based stand-in for
// nltk.sent_tokenize).
#pragma once

#include <string>
#include <vector>

namespace swarmt::data {

// The built-in essay text: paragraphs of essay-like prose, each essay opening with a title sentence.
// Generated once per process (cached) from a fixed seed; about 1.6 MB, ~280k words.
const std::string& builtin_essay_text();

// split_words(builtin_essay_text()), computed once per process.
const std::vector<std::string>& builtin_essay_words();

// Concatenation (with "\n" between files) of every regular file ending in ".txt" in `directory`, in
// file-name order. BadInput naming the directory if it is missing, has no .txt file, or has no words.
std::string load_essay_directory(const std::string& directory);

// The whitespace-separated words of `text` (runs of spaces, tabs and newlines separate; no empty words),
// as RULER's re.sub(r"\s+", " ", text).split(" ").
std::vector<std::string> split_words(const std::string& text);

// Splits single-space-normalised text into sentences, as nltk.sent_tokenize does for ordinary prose:
// a sentence ends at '.', '!' or '?' (possibly repeated, possibly followed by closing quotes or
// brackets) when a space and then a non-lowercase character follow, except after common abbreviations
// ("Mr.", "e.g.", "etc.") and single-letter initials. Sentences are returned without the separating
// space, so joining them with " " gives back the input (for input without leading/trailing or
// repeated spaces).
std::vector<std::string> split_sentences(const std::string& text);

}  // namespace swarmt::data
