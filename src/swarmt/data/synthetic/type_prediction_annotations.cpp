#include "swarmt/data/synthetic/type_prediction_annotations.h"

#include <algorithm>
#include <cctype>
#include <set>

namespace swarmt::data {

namespace {

bool is_ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f'; }

// A copy of `source` of the same length in which comments and the insides of string literals are
// spaces (newlines kept), so brackets, ':', '=', ',' and '#' in it are all real code.
std::string blank_strings_and_comments(const std::string& source) {
  std::string code = source;
  const size_t n = source.size();
  size_t i = 0;
  while (i < n) {
    const char c = source[i];
    if (c == '#') {
      while (i < n && source[i] != '\n') code[i++] = ' ';
      continue;
    }
    if (c != '\'' && c != '"') {
      ++i;
      continue;
    }
    const bool triple = i + 2 < n && source[i + 1] == c && source[i + 2] == c;
    i += triple ? 3 : 1;  // the opening quotes stay
    while (i < n) {
      if (source[i] == '\\') {  // an escaped character (raw strings too: r"\"" does not end at the \")
        code[i] = ' ';
        if (i + 1 < n && source[i + 1] != '\n') code[i + 1] = ' ';
        i += 2;
        continue;
      }
      if (triple && source[i] == c && i + 2 < n && source[i + 1] == c && source[i + 2] == c) {
        i += 3;
        break;
      }
      if (!triple && source[i] == c) {
        ++i;
        break;
      }
      if (!triple && source[i] == '\n') break;  // unterminated: the string ends with the line
      if (source[i] != '\n') code[i] = ' ';
      ++i;
    }
  }
  return code;
}

struct Range {
  size_t begin, end;
};

// Logical lines: physical lines joined while brackets are open or a line ends with '\'.
std::vector<Range> logical_lines(const std::string& code) {
  std::vector<Range> lines;
  const size_t n = code.size();
  size_t begin = 0;
  int depth = 0;
  for (size_t i = 0; i <= n; ++i) {
    if (i < n && code[i] != '\n') {
      const char c = code[i];
      if (c == '(' || c == '[' || c == '{') ++depth;
      if (c == ')' || c == ']' || c == '}') depth = std::max(0, depth - 1);
      continue;
    }
    size_t last = i;
    while (last > begin && is_space(code[last - 1])) --last;
    const bool continued = i < n && (depth > 0 || (last > begin && code[last - 1] == '\\'));
    if (continued) continue;
    lines.push_back({begin, i});
    begin = i + 1;
    depth = 0;
  }
  return lines;
}

std::string identifier_at(const std::string& code, size_t pos, size_t end) {
  if (pos >= end || !is_ident_start(code[pos])) return "";
  size_t e = pos;
  while (e < end && is_ident_char(code[e])) ++e;
  return code.substr(pos, e - pos);
}

size_t skip_spaces(const std::string& code, size_t pos, size_t end) {
  while (pos < end && (is_space(code[pos]) || code[pos] == '\n' || code[pos] == '\\')) ++pos;
  return pos;
}

// First position in [begin, end) at bracket depth 0 (relative to `begin`) holding `target` (for '=',
// a plain assignment or default, not ==, <=, >=, !=, :=), or `end`.
size_t find_top_level(const std::string& code, size_t begin, size_t end, char target) {
  int depth = 0;
  for (size_t i = begin; i < end; ++i) {
    const char c = code[i];
    if (depth == 0 && c == target) {
      if (target != '=') return i;
      const bool compound = (i > begin && std::string("=!<>:").find(code[i - 1]) != std::string::npos) ||
                            (i + 1 < end && code[i + 1] == '=');
      if (!compound) return i;
    }
    if (c == '(' || c == '[' || c == '{') ++depth;
    else if (c == ')' || c == ']' || c == '}') --depth;
  }
  return end;
}

// Trims blanks off [begin, end); false if nothing is left or the range spans lines.
bool trim_type(const std::string& code, size_t& begin, size_t& end) {
  while (begin < end && is_space(code[begin])) ++begin;
  while (end > begin && is_space(code[end - 1])) --end;
  if (begin == end) return false;
  for (size_t i = begin; i < end; ++i)
    if (code[i] == '\n' || code[i] == '\\') return false;
  return true;
}

bool is_keyword(const std::string& word) {
  static const std::set<std::string> kKeywords = {
      "False", "None",  "True",   "and",  "as",     "assert", "async",  "await",    "break", "class",
      "continue", "def", "del",   "elif", "else",   "except", "finally", "for",     "from",  "global",
      "if",    "import", "in",    "is",   "lambda", "nonlocal", "not",  "or",       "pass",  "raise",
      "return", "try",   "while", "with", "yield"};
  return kKeywords.count(word) > 0;
}

struct Scope {
  size_t indent;
  bool is_class;
  std::string name;
};

class Scanner {
 public:
  explicit Scanner(const std::string& source) : source_(source), code_(blank_strings_and_comments(source)) {
    for (size_t i = 0; i < source.size(); ++i)
      if (source[i] == '\n') newlines_.push_back(i);
  }

  std::vector<PythonAnnotation> run() {
    for (const Range& line : logical_lines(code_)) statement(line);
    return found_;
  }

 private:
  void statement(const Range& line) {
    size_t p = line.begin;
    while (p < line.end && is_space(code_[p])) ++p;
    if (p >= line.end || code_[p] == '\n') return;  // blank or comment-only line
    const size_t indent = p - line.begin;
    while (!scopes_.empty() && scopes_.back().indent >= indent) scopes_.pop_back();

    std::string word = identifier_at(code_, p, line.end);
    size_t after = p + word.size();
    if (word == "async") {
      after = skip_spaces(code_, after, line.end);
      word = identifier_at(code_, after, line.end);
      if (word != "def") return;
      after += word.size();
    }
    if (word == "def" || word == "class") {
      const size_t name_at = skip_spaces(code_, after, line.end);
      const std::string name = identifier_at(code_, name_at, line.end);
      if (name.empty()) return;
      if (word == "def") parameters(name, name_at + name.size(), line.end);
      scopes_.push_back({indent, word == "class", name});
      return;
    }
    if (word.empty() || is_keyword(word)) return;
    size_t colon = after;
    while (colon < line.end && is_space(code_[colon])) ++colon;
    if (colon >= line.end || code_[colon] != ':' || (colon + 1 < line.end && code_[colon + 1] == '=')) return;
    size_t type_begin = colon + 1;
    size_t type_end = find_top_level(code_, type_begin, line.end, '=');
    if (!trim_type(code_, type_begin, type_end)) return;
    PythonAnnotation a;
    a.kind = PythonAnnotation::Kind::Variable;
    a.name = word;
    if (!scopes_.empty()) {
      const Scope& innermost = scopes_.back();
      if (innermost.is_class) {
        a.class_name = innermost.name;  // a class body variable
      } else {
        a.function = innermost.name;
        if (scopes_.size() > 1 && scopes_[scopes_.size() - 2].is_class) a.class_name = scopes_[scopes_.size() - 2].name;
      }
    }
    record(a, type_begin, type_end);
  }

  // The parameters of `def name(...)`, from the '(' after `from`.
  void parameters(const std::string& function, size_t from, size_t end) {
    const size_t open = skip_spaces(code_, from, end);
    if (open >= end || code_[open] != '(') return;
    size_t close = find_top_level(code_, open + 1, end, ')');
    if (close >= end) return;
    const std::string enclosing_class = !scopes_.empty() && scopes_.back().is_class ? scopes_.back().name : "";
    size_t piece = open + 1;
    while (piece < close) {
      const size_t comma = find_top_level(code_, piece, close, ',');
      size_t p = skip_spaces(code_, piece, comma);
      while (p < comma && code_[p] == '*') ++p;
      const std::string name = identifier_at(code_, p, comma);
      size_t colon = skip_spaces(code_, p + name.size(), comma);
      if (!name.empty() && name != "self" && name != "cls" && colon < comma && code_[colon] == ':') {
        size_t type_begin = colon + 1;
        size_t type_end = find_top_level(code_, type_begin, comma, '=');
        if (trim_type(code_, type_begin, type_end)) {
          PythonAnnotation a;
          a.kind = PythonAnnotation::Kind::Parameter;
          a.name = name;
          a.function = function;
          a.class_name = enclosing_class;
          record(a, type_begin, type_end);
        }
      }
      piece = comma + 1;
    }
  }

  void record(PythonAnnotation a, size_t type_begin, size_t type_end) {
    a.type = source_.substr(type_begin, type_end - type_begin);
    a.type_begin = type_begin;
    a.type_end = type_end;
    a.line = 1 + (std::lower_bound(newlines_.begin(), newlines_.end(), type_begin) - newlines_.begin());
    found_.push_back(std::move(a));
  }

  const std::string& source_;
  std::string code_;
  std::vector<size_t> newlines_;
  std::vector<Scope> scopes_;
  std::vector<PythonAnnotation> found_;
};

}  // namespace

std::vector<PythonAnnotation> find_python_annotations(const std::string& source) { return Scanner(source).run(); }

std::string mask_annotation(const std::string& source, const PythonAnnotation& a, const std::string& mask) {
  return source.substr(0, a.type_begin) + mask + source.substr(a.type_end);
}

std::vector<std::string> type_identifiers(const std::string& type) {
  std::vector<std::string> ids;
  for (size_t i = 0; i < type.size();) {
    if (is_ident_start(type[i]) && (i == 0 || !is_ident_char(type[i - 1]))) {
      size_t e = i;
      while (e < type.size() && is_ident_char(type[e])) ++e;
      ids.push_back(type.substr(i, e - i));
      i = e;
    } else {
      ++i;
    }
  }
  return ids;
}

bool is_builtin_type_name(const std::string& identifier) {
  static const std::set<std::string> kNames = {
      // builtins
      "int", "float", "complex", "str", "bytes", "bytearray", "bool", "object", "None", "type", "list", "dict",
      "set", "frozenset", "tuple", "range", "memoryview", "slice", "Ellipsis",
      // typing
      "typing", "Any", "Union", "Optional", "List", "Dict", "Set", "FrozenSet", "Tuple", "Type", "Callable",
      "Iterable", "Iterator", "Sequence", "MutableSequence", "Mapping", "MutableMapping", "AbstractSet",
      "MutableSet", "Generator", "AsyncGenerator", "AsyncIterator", "AsyncIterable", "Awaitable", "Coroutine",
      "Collection", "Container", "Hashable", "Sized", "Reversible", "Literal", "Final", "ClassVar", "Annotated",
      "TypeVar", "Generic", "Protocol", "NoReturn", "Never", "Self", "TypeAlias", "DefaultDict", "OrderedDict",
      "Counter", "ChainMap", "Deque", "NamedTuple", "TypedDict", "IO", "TextIO", "BinaryIO", "Pattern", "Match",
      "AnyStr", "Text", "SupportsInt", "SupportsFloat"};
  return kNames.count(identifier) > 0;
}

}  // namespace swarmt::data
