// facts_in_noise: bAbI facts hidden in long background text, as BABILong builds its tasks
// (specs/armt.md §2.2), with our built-in essay text (or a .txt corpus) as the noise.
//
//   qa1 (single supporting fact)   "Mary went to the kitchen." ... "Where is Mary?" -> "kitchen"
//   qa2 (two supporting facts)     "John picked up the apple." ... "John went to the office."
//                                  ... "Where is the apple?" -> "office"
//
// A story is a few facts in time order: people moving between places (and, for qa2, one person picking
// up an object). The supporting fact of the answer (for qa2 the holder's last move after the pick-up)
// sits at the example's depth; facts before it in the story are spread over [0, depth], facts after it
// over [depth, 100], so the story keeps its order in the text. Every place occurs in one fact only, and
// background sentences that mention a name, place or object of the story are left out, so the answer
// word occurs in the context exactly once.
#pragma once

#include <memory>

#include "swarmt/data/corpus/text_corpus.h"
#include "swarmt/data/long_context/long_context_dataset.h"

namespace swarmt::data {

struct FactsInNoiseOptions {
  std::string variant = "mixed";  // qa1 | qa2 | mixed (each example draws one of the two)
  int64_t min_facts = 3;          // story length, supporting facts included
  int64_t max_facts = 6;
};

class FactsInNoiseTask : public LongContextTask {
 public:
  FactsInNoiseTask(std::shared_ptr<const ProseCorpus> corpus, FactsInNoiseOptions options, QaLengthCounter counter);
  std::string name() const override { return "facts_in_noise"; }
  LongContextExample generate(const ExampleRequest& request) const override;

 private:
  std::shared_ptr<const ProseCorpus> corpus_;
  FactsInNoiseOptions options_;
  QaLengthCounter counter_;
};

}  // namespace swarmt::data
