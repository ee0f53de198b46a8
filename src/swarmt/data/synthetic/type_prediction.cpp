#include "swarmt/data/synthetic/type_prediction.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "swarmt/core/error.h"
#include "swarmt/data/synthetic/synthetic_tasks_random.h"

namespace swarmt::data {

namespace {

bool is_identifier_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// `identifier` occurs in `text` as a whole identifier.
bool mentions_identifier(const std::string& text, const std::string& identifier) {
  for (size_t pos = text.find(identifier); pos != std::string::npos; pos = text.find(identifier, pos + 1)) {
    const size_t end = pos + identifier.size();
    if ((pos == 0 || !is_identifier_char(text[pos - 1])) && (end == text.size() || !is_identifier_char(text[end])))
      return true;
  }
  return false;
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    end = end == std::string::npos ? text.size() : end + 1;
    lines.push_back(text.substr(start, end - start));
    start = end;
  }
  return lines;
}

}  // namespace

std::string type_question(const PythonAnnotation& a) {
  const std::string function = a.class_name.empty() ? a.function : a.class_name + "." + a.function;
  if (a.kind == PythonAnnotation::Kind::Parameter)
    return "# What is the type of parameter `" + a.name + "` of function `" + function + "`? Answer:";
  return "# What is the type of `" + a.name + "` in function `" + function + "`? Answer:";
}

std::string render_python_file(const PythonFile& file) {
  std::string out = "# file: " + file.path + "\n" + file.text;
  if (out.back() != '\n') out += '\n';
  return out;
}

TypePredictionTask::TypePredictionTask(std::vector<PythonProject> projects, QaLengthCounter counter)
    : counter_(std::move(counter)) {
  SWARMT_CHECK_INPUT(projects.size() >= 2, "type_prediction: needs at least two projects (files of other projects"
                     " pad the context), got ", projects.size());
  for (auto& project : projects) {
    std::vector<File> files;
    bool any = false;
    for (auto& f : project.files) {
      File file;
      file.path = f.path;
      file.rendered = render_python_file(f);
      file.rendered_lines = split_lines(file.rendered);
      for (auto& a : find_python_annotations(f.text))
        if (!a.function.empty()) file.candidates.push_back(std::move(a));
      any = any || !file.candidates.empty();
      file.text = std::move(f.text);
      files.push_back(std::move(file));
    }
    if (any) projects_with_candidates_.push_back(projects_.size());
    projects_.push_back(std::move(files));
  }
  SWARMT_CHECK_INPUT(!projects_with_candidates_.empty(),
                     "type_prediction: no project has an annotated variable or parameter inside a function");
}

LongContextExample TypePredictionTask::generate(const ExampleRequest& request) const {
  TaskRng rng(request.seed);
  constexpr int kMaxAttempts = 32;
  for (int attempt = 0; attempt < kMaxAttempts; ++attempt) {
    const size_t project_index = rng.choice(projects_with_candidates_);
    const auto& project = projects_[project_index];
    std::vector<size_t> targets;
    for (size_t i = 0; i < project.size(); ++i)
      if (!project[i].candidates.empty()) targets.push_back(i);
    const size_t target_index = rng.choice(targets);
    const File& target = project[target_index];

    std::vector<const File*> own;  // the project's other files, in path order
    for (size_t i = 0; i < project.size(); ++i)
      if (i != target_index) own.push_back(&project[i]);
    std::string own_text;
    for (const File* f : own) own_text += f->rendered;

    // Candidates whose type names are builtins or appear in the project's other files. A name known only
    // from the target file itself (its import line, a class defined above) does not count: the answer
    // must depend on files stacked earlier, which is what tests memory over the long context.
    std::vector<const PythonAnnotation*> grounded, with_project_type;
    for (const auto& a : target.candidates) {
      bool ok = true, project_type = false;
      for (const auto& id : type_identifiers(a.type)) {
        if (is_builtin_type_name(id)) continue;
        project_type = true;
        ok = ok && mentions_identifier(own_text, id);
      }
      if (!ok) continue;
      grounded.push_back(&a);
      if (project_type) with_project_type.push_back(&a);
    }
    if (grounded.empty()) continue;
    const PythonAnnotation& chosen = *(with_project_type.empty() ? rng.choice(grounded) : rng.choice(with_project_type));

    LongContextExample e;
    e.id = request.id;
    e.task = name();
    e.bucket = request.bucket;
    e.question = type_question(chosen);
    e.answer = chosen.type;
    const std::string masked_target = render_python_file({target.path, mask_annotation(target.text, chosen)});

    // Padding: the files of the other projects in a random order (repeated if the corpus is short).
    std::vector<const File*> padding;
    for (size_t p = 0; p < projects_.size(); ++p)
      if (p != project_index)
        for (const auto& f : projects_[p]) padding.push_back(&f);
    rng.shuffle(padding);
    const double depth = request.depth ? *request.depth : 100.0 * rng.uniform_real();

    size_t first_own = 0;  // own files before this index are dropped (too long for the length)
    auto build = [&](int64_t units) {
      // Padding chunks of whole files, the last one cut to make exactly `units` lines.
      std::vector<std::string> chunks;
      std::vector<int64_t> lines_before;  // at each chunk boundary
      int64_t total = 0;
      for (size_t k = 0; total < units; ++k) {
        const File& f = *padding[k % padding.size()];
        const auto take = std::min<int64_t>(units - total, static_cast<int64_t>(f.rendered_lines.size()));
        std::string chunk;
        for (int64_t l = 0; l < take; ++l) chunk += f.rendered_lines[static_cast<size_t>(l)];
        lines_before.push_back(total);
        chunks.push_back(std::move(chunk));
        total += take;
      }
      lines_before.push_back(total);
      // The project's files go to the file boundary nearest to the depth (ties: the earlier one).
      const double wanted = depth / 100.0 * static_cast<double>(total);
      size_t boundary = 0;
      for (size_t b = 1; b < lines_before.size(); ++b)
        if (std::abs(static_cast<double>(lines_before[b]) - wanted) < std::abs(static_cast<double>(lines_before[boundary]) - wanted))
          boundary = b;
      ContextDraft draft;
      auto append = [&](const std::string& chunk) {
        if (!draft.context.empty()) draft.context += "\n";
        draft.context += chunk;
      };
      for (size_t c = 0; c < boundary; ++c) append(chunks[c]);
      const size_t own_at = draft.context.empty() ? 0 : draft.context.size() + 1;
      for (size_t f = first_own; f < own.size(); ++f) append(own[f]->rendered);
      for (size_t c = boundary; c < chunks.size(); ++c) append(chunks[c]);
      append(masked_target);
      draft.depth = 100.0 * static_cast<double>(own_at) / static_cast<double>(draft.context.size());
      return draft;
    };
    auto fits_with_one_line = [&] {
      return counter_.prompt_tokens(qa_prompt(build(1).context, e.question)) + counter_.answer_tokens(e.answer) <=
             request.target_tokens;
    };
    while (!fits_with_one_line() && first_own < own.size()) ++first_own;
    if (!fits_with_one_line()) continue;  // the target file alone is too long: another target
    if (first_own > 0) {  // files were dropped: the type must still be grounded in what is left
      std::string kept;
      for (size_t f = first_own; f < own.size(); ++f) kept += own[f]->rendered;
      bool ok = true;
      for (const auto& id : type_identifiers(chosen.type))
        ok = ok && (is_builtin_type_name(id) || mentions_identifier(kept, id));
      if (!ok) continue;
    }

    FittedContext fit = fit_context(build, e.question, e.answer, request.target_tokens, counter_);
    e.context = std::move(fit.draft.context);
    e.depth = fit.draft.depth;
    e.length_tokens = fit.length_tokens;
    return e;
  }
  throw_input_error("type_prediction: found no target file with a usable annotation that fits in ",
                    request.target_tokens, " tokens after ", kMaxAttempts, " attempts");
}

}  // namespace swarmt::data
