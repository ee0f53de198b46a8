// Finding type annotations in Python source with a line-based scanner (no Python parser), for the
// type_prediction task.
//
// What it finds:
//   variables   `name: TYPE` / `name: TYPE = value` statements (module, class or function level)
//   parameters  `name: TYPE` / `name: TYPE = default` inside `def f(...)` / `async def f(...)`,
//               also when the signature spans several lines
// with the enclosing function and class (from indentation), the line, and the byte range of TYPE so it
// can be masked.
//
// How: a first pass blanks comments and the insides of string literals ('...', "...", triple-quoted,
// with any prefix), so quotes, '#', ':' and brackets inside them never confuse the rest; lines are
// joined into logical lines while brackets are open or a line ends with '\'; each logical line is then
// matched against the `def`, `class` and `name:` forms, splitting at top-level ',', ':' and '='.
//
// Limits (documented in docs/data.md): attribute targets (`self.x: int = 0`) are skipped; annotations
// whose type spans lines are skipped; statements after ';' or after the ':' of a one-line compound
// statement (`if x: y: int = 1`) are not seen; type comments (`# type: int`) are ignored; indentation
// that mixes tabs and spaces inconsistently can attach a variable to the wrong function; f-strings with
// nested quotes of the same kind (Python 3.12) are mis-read.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace swarmt::data {

struct PythonAnnotation {
  enum class Kind { Variable, Parameter };
  Kind kind = Kind::Variable;
  std::string name;        // "x"
  std::string type;        // "Dict[str, int]", as written
  std::string function;    // innermost enclosing function (the function itself for a parameter); "" if none
  std::string class_name;  // class whose method `function` is (or whose body holds the variable); "" if none
  int64_t line = 0;        // 1-based line of the type
  size_t type_begin = 0;   // byte range of the type in the source
  size_t type_end = 0;
};

std::vector<PythonAnnotation> find_python_annotations(const std::string& source);

// The source with the annotation's type replaced by `mask`.
std::string mask_annotation(const std::string& source, const PythonAnnotation& annotation,
                            const std::string& mask = "<mask>");

// Identifiers ([A-Za-z_][A-Za-z0-9_]*) of a type string, in order, with repeats.
std::vector<std::string> type_identifiers(const std::string& type);

// True for names that need no definition in the project: builtins and the typing module's names
// (int, str, List, Optional, ...).
bool is_builtin_type_name(const std::string& identifier);

}  // namespace swarmt::data
