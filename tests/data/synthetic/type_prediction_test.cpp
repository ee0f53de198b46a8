#include "swarmt/data/synthetic/type_prediction.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "swarmt/core/error.h"
#include "swarmt/data/source_factory.h"
#include "test_util.h"

namespace swarmt::data {
namespace {

// A hand-written module with the forms the scanner must handle, and traps it must not fall into.
const char* const kModule = R"PY(#!/usr/bin/env python3
"""Module docstring with a fake annotation:
fake: int = 1
"""
from typing import Any, Dict, List, Optional

LIMIT: int = 10
table = {
    key: value,
    "other": 2,
}


class Store:
    capacity: int = 4

    def __init__(self, name: str, *args: Any, flag: bool = True, **kwargs: Dict[str, Any]) -> None:
        self.items: List[str] = []  # attribute target: skipped
        count: int = len(name)  # comment with x: float

    async def fetch(
        self,
        key: "Optional[str]" = None,
        default: Dict[str, int] = {"a": 1, "b": 2},
        callback=lambda v: v,
    ) -> Optional[str]:
        text = "label: str = no"
        result: Optional[str] = None
        if key: result = key
        def inner(z: float) -> float:
            scaled: float = z * 2
            return scaled
        after_inner: bool = True
        return result


def top(values: List[int], n: int = 3) -> int:
    total: int = sum(values[:n])
    return total
)PY";

struct Expected {
  PythonAnnotation::Kind kind;
  std::string name, type, function, class_name;
  int64_t line;
};

TEST(PythonAnnotations, scanner_finds_variables_and_parameters_with_their_scopes) {
  using K = PythonAnnotation::Kind;
  const std::vector<Expected> expected = {
      {K::Variable, "LIMIT", "int", "", "", 7},
      {K::Variable, "capacity", "int", "", "Store", 15},
      {K::Parameter, "name", "str", "__init__", "Store", 17},
      {K::Parameter, "args", "Any", "__init__", "Store", 17},
      {K::Parameter, "flag", "bool", "__init__", "Store", 17},
      {K::Parameter, "kwargs", "Dict[str, Any]", "__init__", "Store", 17},
      {K::Variable, "count", "int", "__init__", "Store", 19},
      {K::Parameter, "key", "\"Optional[str]\"", "fetch", "Store", 23},
      {K::Parameter, "default", "Dict[str, int]", "fetch", "Store", 24},
      {K::Variable, "result", "Optional[str]", "fetch", "Store", 28},
      {K::Parameter, "z", "float", "inner", "", 30},
      {K::Variable, "scaled", "float", "inner", "", 31},
      {K::Variable, "after_inner", "bool", "fetch", "Store", 33},
      {K::Parameter, "values", "List[int]", "top", "", 37},
      {K::Parameter, "n", "int", "top", "", 37},
      {K::Variable, "total", "int", "top", "", 38},
  };
  const std::string source = kModule;
  const auto found = find_python_annotations(source);
  ASSERT_EQ(found.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    SCOPED_TRACE(expected[i].name);
    EXPECT_EQ(found[i].kind, expected[i].kind);
    EXPECT_EQ(found[i].name, expected[i].name);
    EXPECT_EQ(found[i].type, expected[i].type);
    EXPECT_EQ(found[i].function, expected[i].function);
    EXPECT_EQ(found[i].class_name, expected[i].class_name);
    EXPECT_EQ(found[i].line, expected[i].line);
    EXPECT_EQ(source.substr(found[i].type_begin, found[i].type_end - found[i].type_begin), expected[i].type);
  }
}

TEST(PythonAnnotations, masking_replaces_exactly_the_type) {
  const std::string source = kModule;
  const auto found = find_python_annotations(source);
  const auto& result = found[9];  // result: Optional[str] = None
  ASSERT_EQ(result.name, "result");
  const std::string masked = mask_annotation(source, result);
  EXPECT_EQ(count_occurrences(masked, "<mask>"), 1);
  EXPECT_NE(masked.find("        result: <mask> = None\n"), std::string::npos);
  // Everything else is unchanged.
  const size_t at = masked.find("<mask>");
  EXPECT_EQ(masked.substr(0, at), source.substr(0, result.type_begin));
  EXPECT_EQ(masked.substr(at + 6), source.substr(result.type_end));
  EXPECT_EQ(type_question(result), "# What is the type of `result` in function `Store.fetch`? Answer:");
  EXPECT_EQ(type_question(found[14]), "# What is the type of parameter `n` of function `top`? Answer:");
}

TEST(PythonAnnotations, type_names_split_into_builtins_and_project_names) {
  EXPECT_EQ(type_identifiers("Dict[str, List[LanternRecord]]"),
            (std::vector<std::string>{"Dict", "str", "List", "LanternRecord"}));
  EXPECT_TRUE(is_builtin_type_name("Optional"));
  EXPECT_TRUE(is_builtin_type_name("int"));
  EXPECT_FALSE(is_builtin_type_name("LanternRecord"));
}

TEST(PythonProjects, generated_projects_are_deterministic_and_annotated) {
  auto a = synthetic_python_projects(4, 9), b = synthetic_python_projects(4, 9);
  ASSERT_EQ(a.size(), 4u);
  for (size_t p = 0; p < a.size(); ++p) {
    ASSERT_EQ(a[p].files.size(), 4u);
    for (size_t f = 0; f < a[p].files.size(); ++f) EXPECT_EQ(a[p].files[f].text, b[p].files[f].text);
    EXPECT_EQ(a[p].files[0].path, a[p].name + "/app.py");
    // app.py annotates locals with types that services.py returns.
    int with_project_type = 0;
    for (const auto& an : find_python_annotations(a[p].files[0].text)) {
      for (const auto& id : type_identifiers(an.type))
        if (!is_builtin_type_name(id) && !an.function.empty()) {
          ++with_project_type;
          EXPECT_NE(a[p].files[2].text.find("-> " + an.type + ":"), std::string::npos) << an.type;
          break;
        }
    }
    EXPECT_GE(with_project_type, 3);
  }
}

TEST(PythonProjects, a_directory_is_read_as_one_project_per_subdirectory) {
  testing::TempDir dir;
  auto projects = synthetic_python_projects(3, 1);
  write_python_projects(projects, dir.path());
  testing::write_file(dir.file(".hidden/x.py"), "a: int = 1\n");
  testing::write_file(dir.file(projects[0].name + "/latin1.py"), "s: str = '\xe9'\n");  // not UTF-8: skipped
  auto loaded = load_python_projects(dir.path());
  ASSERT_EQ(loaded.size(), 3u);
  std::sort(projects.begin(), projects.end(), [](const auto& x, const auto& y) { return x.name < y.name; });
  for (size_t p = 0; p < 3; ++p) {
    EXPECT_EQ(loaded[p].name, projects[p].name);
    ASSERT_EQ(loaded[p].files.size(), projects[p].files.size());
    for (size_t f = 0; f < loaded[p].files.size(); ++f) {
      EXPECT_EQ(loaded[p].files[f].path, projects[p].files[f].path);
      EXPECT_EQ(loaded[p].files[f].text, projects[p].files[f].text);
    }
  }
  EXPECT_THROW(load_python_projects(dir.file("missing")), Error);
}

struct TypeFixture {
  TextTokenizer tok = load_text_tokenizer("byte");
  QaLengthCounter counter = make_qa_length_counter(tok.tokenizer, tok.ids);
  TypePredictionTask task{synthetic_python_projects(12, 3), counter};

  LongContextExample make(uint64_t seed, int64_t target, std::optional<double> depth = std::nullopt) const {
    ExampleRequest r;
    r.target_tokens = target;
    r.seed = seed;
    r.depth = depth;
    return task.generate(r);
  }
};

TEST(TypePrediction, masked_target_file_comes_last_and_its_type_is_defined_earlier) {
  TypeFixture f;
  for (uint64_t seed = 0; seed < 8; ++seed) {
    auto e = f.make(seed, 6000);
    EXPECT_EQ(e.question.rfind("# What is the type of ", 0), 0u);
    const size_t mask = e.context.find("<mask>");
    ASSERT_NE(mask, std::string::npos);
    EXPECT_EQ(count_occurrences(e.context, "<mask>"), 1);
    const size_t target_header = e.context.rfind("# file: ");
    EXPECT_LT(target_header, mask);  // the mask is in the last file
    // The masked variable is the one the question names.
    const std::string name = e.question.substr(e.question.find('`') + 1, e.question.find('`', e.question.find('`') + 1) -
                                                                               e.question.find('`') - 1);
    EXPECT_EQ(e.context.substr(mask - name.size() - 2, name.size() + 2), name + ": ");
    // Every project type name of the answer appears before the target file.
    for (const auto& id : type_identifiers(e.answer)) {
      if (!is_builtin_type_name(id)) {
        EXPECT_NE(e.context.substr(0, target_header).find(id), std::string::npos) << id;
      }
    }
  }
}

TEST(TypePrediction, project_files_move_with_the_requested_depth_and_length_fits) {
  TypeFixture f;
  std::vector<double> depths;
  for (double depth : {0.0, 50.0, 100.0}) {
    auto e = f.make(4, 16384, depth);
    EXPECT_LE(e.length_tokens, 16384);
    EXPECT_GE(e.length_tokens, 16384 - 100) << "one line of slack at most";
    const auto tokens = tokenize_qa(f.tok.tokenizer, f.tok.ids, qa_prompt(e.context, e.question), e.answer);
    EXPECT_EQ(static_cast<int64_t>(tokens.ids.size()), e.length_tokens);
    depths.push_back(e.depth);
  }
  // The project's files lead the context at depth 0 and follow all padding at depth 100 (the target
  // file, last, takes the end of the context).
  EXPECT_EQ(depths[0], 0.0);
  EXPECT_GT(depths[1], depths[0] + 5.0);
  EXPECT_GT(depths[2], depths[1] + 5.0);
  auto a = f.make(21, 4096), b = f.make(21, 4096);
  EXPECT_EQ(a.context, b.context);
  EXPECT_EQ(a.answer, b.answer);
}

TEST(TypePrediction, needs_two_projects) {
  TypeFixture f;
  try {
    TypePredictionTask one(synthetic_python_projects(1, 3), f.counter);
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "type_prediction: needs at least two projects (files of other projects pad the context), got 1");
  }
}

}  // namespace
}  // namespace swarmt::data
