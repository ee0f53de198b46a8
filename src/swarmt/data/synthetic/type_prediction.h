// type_prediction: variable type prediction in stacked Python files, our analogue of ManyTypes-long
// (specs/armt.md §7).
//
// An example takes one project, picks a target file and one annotation in it (a local variable of a
// function, or a parameter), masks its type ("x: <mask> = ..."), and asks
//   # What is the type of `x` in function `f`? Answer:          -> "List[LanternRecord]"
// The context stacks files, each under a "# file: <path>" line:
//   [files of other projects] [the other files of the target's project] [files of other projects] [target]
// The project's own files (which hold the definition or import that determines the type) sit at the
// example's depth; padding files of other projects fill the rest up to the length (cut at a line), and
// the masked target file comes last, right before the question. The project's files are dropped from
// the front when they alone exceed the length.
//
// Candidates are annotations found by the line-based scanner (type_prediction_annotations.h) inside a
// function, whose type names are all builtins/typing names or appear in the project's other files, which
// come before the target (so the answer can be known from the context, but only by remembering those
// files; a name seen only in the target file itself does not count). Candidates with a project type
// (a name that is not a builtin) are preferred; builtin-only ones are used when a file has no other.
#pragma once

#include <vector>

#include "swarmt/data/long_context/long_context_dataset.h"
#include "swarmt/data/synthetic/type_prediction_annotations.h"
#include "swarmt/data/synthetic/type_prediction_projects.h"

namespace swarmt::data {

// "# What is the type of `x` in function `f`? Answer:" (methods: `Class.f`; parameters: "of parameter
// `x` of function `f`").
std::string type_question(const PythonAnnotation& annotation);

// "# file: <path>\n<text>" with a final newline.
std::string render_python_file(const PythonFile& file);

class TypePredictionTask : public LongContextTask {
 public:
  // BadInput if there are fewer than two projects (padding comes from other projects) or no file has a
  // candidate annotation.
  TypePredictionTask(std::vector<PythonProject> projects, QaLengthCounter counter);
  std::string name() const override { return "type_prediction"; }
  LongContextExample generate(const ExampleRequest& request) const override;

  struct File {
    std::string path;
    std::string text;
    std::string rendered;
    std::vector<std::string> rendered_lines;  // each with its '\n'
    std::vector<PythonAnnotation> candidates;
  };

 private:
  std::vector<std::vector<File>> projects_;
  std::vector<size_t> projects_with_candidates_;
  QaLengthCounter counter_;
};

}  // namespace swarmt::data
