// long_qa: long-document question answering, our analogue of GovReport-long (specs/armt.md §7).
//
// A long document is built by concatenating passages of a prose corpus (the built-in essay text, or a
// directory of .txt files). One fact sentence of a template, about a named organisation, is inserted
// into the passage at the example's depth; `distractors` facts of the same template about other
// organisations (and, for templates with a year, sometimes the same organisation in another year) are
// inserted at random depths. The question asks for the value of the one fact:
//
//   "The budget of the Harbor Office was 4,512 thousand dollars in 1987."
//   Question: What was the budget of the Harbor Office in 1987?      Answer: 4,512 thousand dollars
//
// Templates: budget, staff, director, headquarters city, founding year, and a code word
//
//   "The code word of the Harbor Office is garnet."  Question: What is the code word of the Harbor Office?
//
// (the plainest key -> value form: the key is the entity, the value one of 48 colour and stone names, so
// that recalling it means recalling which word, not copying a string of digits). `templates` restricts the
// draw to some of them.
//
// Rewrites (the associative retrieval with rewrites of the ARMT 2024 paper), for templates without a year:
// the asked entity's value is stated `rewrites` + 1 times, each later statement overriding the earlier ones
// ("The code word of the Harbor Office was changed to onyx."), and the question asks for the latest value; every distractor entity is stated
// 1 ... rewrites + 1 times, so how often an entity occurs does not give the asked one away. The statements
// of the asked entity keep their order in the text; the answer's statement is the last of them. Entities are "<Noun> <Kind>"
// ("Harbor Office", "Lantern Council") from our word lists; people and cities come from short lists of
// our own. Background sentences that mention any entity or value of the example are left out, values
// never contain one another, so the answer occurs in the context exactly once (checked; an example that
// fails the check is redrawn).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "swarmt/data/corpus/text_corpus.h"
#include "swarmt/data/long_context/long_context_dataset.h"

namespace swarmt::data {

struct LongQaOptions {
  int64_t distractors = 4;             // facts of the same template about other entities
  std::vector<std::string> templates;  // names to draw from (long_qa_template_names()); empty: all
  int64_t rewrites = 0;                // earlier values of the asked fact that a later statement overrides
};

// budget, staff, director, headquarters, founded, code.
const std::vector<std::string>& long_qa_template_names();

class LongQaTask : public LongContextTask {
 public:
  LongQaTask(std::shared_ptr<const ProseCorpus> corpus, LongQaOptions options, QaLengthCounter counter);
  std::string name() const override { return "long_qa"; }
  LongContextExample generate(const ExampleRequest& request) const override;

 private:
  std::shared_ptr<const ProseCorpus> corpus_;
  LongQaOptions options_;
  QaLengthCounter counter_;
  std::vector<size_t> templates_;  // indices of the templates to draw from
};

}  // namespace swarmt::data
