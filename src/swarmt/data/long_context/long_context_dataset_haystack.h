// Prose haystacks with inserted fact sentences, shared by long_qa (GovReport-long analogue) and
// facts_in_noise (BABILong-style).
//
// The background is a run of passages of a ProseCorpus, taken in corpus order from a chosen first
// passage (wrapping around), so consecutive paragraphs of one essay or report stay together, as in a
// concatenation of documents. Sentences the caller rejects (those that mention an entity of the
// example, so the answer occurs once) are left out. The background has exactly `num_words` words: whole
// sentences, the last one cut if needed. Each fact sentence is inserted at the sentence boundary
// nearest to its depth (percent of the background's words), inside the passage there.
//
// Layout: passages joined with "\n\n", sentences (facts included) with " ".
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "swarmt/data/corpus/text_corpus.h"

namespace swarmt::data {

struct ProseInsert {
  std::string sentence;
  double depth = 0;  // percent of the background words before it
};

struct ProseHaystack {
  std::string text;
  std::vector<double> depths;  // per insert, in the caller's order: percent of text characters before it
};

// BadInput if the corpus has no sentence the filter keeps.
ProseHaystack build_prose_haystack(const ProseCorpus& corpus, size_t first_passage, int64_t num_words,
                                   const std::vector<ProseInsert>& inserts,
                                   const std::function<bool(const std::string&)>& keep_sentence);

// Lower-cased ASCII words (runs of letters and digits) of a sentence.
std::vector<std::string> lowercase_words(const std::string& sentence);

}  // namespace swarmt::data
