#include "swarmt/data/synthetic/type_prediction_projects.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "swarmt/core/error.h"
#include "swarmt/core/json.h"
#include "swarmt/data/corpus/text_corpus.h"
#include "swarmt/data/synthetic/synthetic_tasks_random.h"
#include "swarmt/data/synthetic/word_lists.h"

namespace fs = std::filesystem;

namespace swarmt::data {

namespace {

std::string capitalise(std::string word) {
  if (!word.empty()) word[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(word[0])));
  return word;
}

std::string lower(std::string word) {
  for (auto& c : word) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return word;
}

// Nouns that are safe as Python identifiers (not keywords or common builtins).
bool usable_noun(const std::string& noun) {
  static const std::set<std::string> kReserved = {"and", "as", "class", "def", "for", "from", "global", "if", "import",
                                                  "in", "is", "lambda", "not", "or", "pass", "return", "try", "while",
                                                  "with", "yield", "type", "list", "dict", "set", "map", "filter",
                                                  "object", "file", "input", "open", "print", "range", "id", "hash"};
  return noun.size() >= 3 && noun.size() <= 10 && !kReserved.count(noun);
}

struct ClassSpec {
  std::string name;   // LanternRecord
  std::string snake;  // lantern_record
};

struct FieldSpec {
  std::string name, type, default_value;
};

const std::vector<FieldSpec>& builtin_fields() {
  static const std::vector<FieldSpec> kFields = {
      {"weight", "float", "0.0"},   {"count", "int", "0"},       {"active", "bool", "True"},
      {"tags", "List[str]", "field(default_factory=list)"},      {"scores", "Dict[str, float]", "field(default_factory=dict)"},
      {"note", "Optional[str]", "None"}, {"size", "int", "0"},   {"ratio", "float", "1.0"},
      {"label", "str", "\"\""},     {"flags", "Set[str]", "field(default_factory=set)"}};
  return kFields;
}

// One generated project; the code is built line by line.
class ProjectWriter {
 public:
  ProjectWriter(std::string name, std::vector<ClassSpec> classes, uint64_t seed)
      : name_(std::move(name)), classes_(std::move(classes)), rng_(seed) {}

  PythonProject write() {
    // Names shared between modules first, so every module calls what the others define.
    normalize_ = pick({"normalize_text", "clean_text", "canonical_text"});
    parse_ = pick({"parse_number", "to_number", "read_number"});
    for (const auto& c : classes_) service_names(c);
    // Path order. The task stacks a project's other files before the target file, so for a target in
    // app.py the modules that determine its types come first.
    PythonProject project;
    project.name = name_;
    project.files.push_back({name_ + "/app.py", app()});
    project.files.push_back({name_ + "/models.py", models()});
    project.files.push_back({name_ + "/services.py", services()});
    project.files.push_back({name_ + "/utils.py", utils()});
    return project;
  }

 private:
  std::string pick(const std::vector<std::string>& options) { return rng_.choice(options); }

  std::string models() {
    std::string s = "\"\"\"Data model of the " + words() + " project.\"\"\"\n";
    s += "from dataclasses import dataclass, field\nfrom typing import Dict, List, Optional, Set\n";
    for (size_t i = 0; i < classes_.size(); ++i) {
      const ClassSpec& c = classes_[i];
      s += "\n\n@dataclass\nclass " + c.name + ":\n    name: str\n";
      std::vector<FieldSpec> fields;
      for (int64_t k : rng_.sample_without_replacement(static_cast<int64_t>(builtin_fields().size()), 2))
        fields.push_back(builtin_fields()[static_cast<size_t>(k)]);
      if (i > 0) {  // a reference to an earlier class
        const ClassSpec& p = classes_[static_cast<size_t>(rng_.uniform_int(0, static_cast<int64_t>(i) - 1))];
        if (rng_.uniform_real() < 0.5) fields.push_back({p.snake, "Optional[" + p.name + "]", "None"});
        else fields.push_back({p.snake + "s", "List[" + p.name + "]", "field(default_factory=list)"});
      }
      for (const auto& f : fields) s += "    " + f.name + ": " + f.type + " = " + f.default_value + "\n";
      s += "\n    def describe(self, prefix: str) -> str:\n";
      const std::string label = pick({"label", "text", "caption"});
      s += "        " + label + ": str = prefix + self.name\n        return " + label + "\n";
      if (rng_.uniform_real() < 0.5) {
        s += "\n    def is_valid(self, limit: int) -> bool:\n        length: int = len(self.name)\n"
             "        return 0 < length <= limit\n";
      } else {
        s += "\n    def score(self, factor: float) -> float:\n        total: float = factor * len(self.name)\n"
             "        return total\n";
      }
    }
    return s;
  }

  std::string utils() {
    std::string s = "\"\"\"Small helpers of the " + words() + " project.\"\"\"\nfrom typing import Dict, List\n";
    s += "\n\ndef " + normalize_ + "(raw: str) -> str:\n    cleaned: str = raw.strip().lower()\n    return cleaned\n";
    s += "\n\ndef " + parse_ + "(text: str, default: float = 0.0) -> float:\n    try:\n        value: float = float(text)\n"
         "    except ValueError:\n        value = default\n    return value\n";
    s += "\n\ndef split_chunks(items: List[str], size: int) -> List[List[str]]:\n"
         "    chunks: List[List[str]] = [items[i:i + size] for i in range(0, len(items), size)]\n    return chunks\n";
    s += "\n\ndef merge_counts(left: Dict[str, int], right: Dict[str, int]) -> Dict[str, int]:\n"
         "    merged: Dict[str, int] = dict(left)\n    for key, count in right.items():\n"
         "        merged[key] = merged.get(key, 0) + count\n    return merged\n";
    return s;
  }

  // Function names per class, drawn once so services.py and app.py agree.
  struct ServiceNames {
    std::string load, load_batch, index, find;
  };

  const ServiceNames& service_names(const ClassSpec& c) {
    auto it = services_.find(c.name);
    if (it != services_.end()) return it->second;
    ServiceNames n;
    const std::string load = pick({"load", "fetch", "read"});
    n.load = load + "_" + c.snake;
    n.load_batch = load + "_" + c.snake + "_batch";
    n.index = pick({"index", "group", "map"}) + "_" + c.snake + "s";
    n.find = pick({"find", "lookup", "pick"}) + "_" + c.snake;
    return services_.emplace(c.name, n).first->second;
  }

  std::string services() {
    std::string s = "\"\"\"Loading and lookup for the " + words() + " project.\"\"\"\n";
    s += "from typing import Dict, List, Optional\n\nfrom " + name_ + ".models import " + class_list() + "\n";
    s += "from " + name_ + ".utils import " + normalize_ + ", " + parse_ + "\n";
    for (const auto& c : classes_) {
      const ServiceNames& n = service_names(c);
      s += "\n\ndef " + n.load + "(path: str) -> " + c.name + ":\n";
      s += "    name: str = " + normalize_ + "(path)\n";
      s += "    item: " + c.name + " = " + c.name + "(name=name)\n    return item\n";
      s += "\n\ndef " + n.load_batch + "(paths: List[str]) -> List[" + c.name + "]:\n";
      s += "    items: List[" + c.name + "] = [" + n.load + "(path) for path in paths]\n    return items\n";
      s += "\n\ndef " + n.index + "(items: List[" + c.name + "]) -> Dict[str, " + c.name + "]:\n";
      s += "    table: Dict[str, " + c.name + "] = {item.name: item for item in items}\n    return table\n";
      s += "\n\ndef " + n.find + "(table: Dict[str, " + c.name + "], key: str) -> Optional[" + c.name + "]:\n";
      s += "    found: Optional[" + c.name + "] = table.get(" + normalize_ + "(key))\n    return found\n";
    }
    return s;
  }

  std::string app() {
    std::string imports;
    for (const auto& c : classes_) {
      const ServiceNames& n = services_.at(c.name);
      imports += (imports.empty() ? "" : ", ") + n.load_batch + ", " + n.index + ", " + n.find;
    }
    std::string s = "\"\"\"Entry points of the " + words() + " project.\"\"\"\nimport sys\nfrom typing import Dict, List, Optional\n\n";
    s += "from " + name_ + ".models import " + class_list() + "\n";
    s += "from " + name_ + ".services import (\n    " + imports + ",\n)\n";
    std::string main_calls;
    for (const auto& c : classes_) {
      const ServiceNames& n = services_.at(c.name);
      const std::string batch = pick({"batch", "loaded", "records", "entries"});
      const std::string table = pick({"table", "lookup", "by_name", "catalog"});
      const std::string found = pick({"found", "match", "hit", "result"});
      s += "\n\ndef process_" + c.snake + "s(paths: List[str], key: str) -> bool:\n";
      s += "    " + batch + ": List[" + c.name + "] = " + n.load_batch + "(paths)\n";
      s += "    " + table + ": Dict[str, " + c.name + "] = " + n.index + "(" + batch + ")\n";
      s += "    " + found + ": Optional[" + c.name + "] = " + n.find + "(" + table + ", key)\n";
      s += "    return " + found + " is not None\n";
      if (rng_.uniform_real() < 0.6) {
        s += "\n\ndef report_" + c.snake + "(" + c.snake + ": " + c.name + ", prefix: str) -> str:\n";
        const std::string text = pick({"text", "line", "summary"});
        s += "    " + text + ": str = " + c.snake + ".describe(prefix)\n    return " + text + "\n";
      }
      main_calls += "    ok = process_" + c.snake + "s(argv, \"" + c.snake + "\") and ok\n";
    }
    s += "\n\ndef main(argv: List[str]) -> int:\n    ok: bool = True\n" + main_calls + "    return 0 if ok else 1\n";
    s += "\n\nif __name__ == \"__main__\":\n    sys.exit(main(sys.argv[1:]))\n";
    return s;
  }

  std::string class_list() const {
    std::string out;
    for (const auto& c : classes_) out += (out.empty() ? "" : ", ") + c.name;
    return out;
  }

  std::string words() const {
    std::string w = name_;
    std::replace(w.begin(), w.end(), '_', ' ');
    return w;
  }

  std::string name_;
  std::vector<ClassSpec> classes_;
  TaskRng rng_;
  std::string normalize_, parse_;
  std::map<std::string, ServiceNames> services_;
};

}  // namespace

std::vector<PythonProject> synthetic_python_projects(size_t count, uint64_t seed) {
  static const std::vector<std::string> kSuffixes = {"Record", "Ledger", "Config", "Report", "Store",   "Client",
                                                     "Batch",  "Event",  "Profile", "Entry", "Registry", "Snapshot",
                                                     "Queue",  "Summary", "Plan",   "Route"};
  std::vector<std::string> nouns;
  for (const auto& n : common_nouns())
    if (usable_noun(n)) nouns.push_back(n);
  TaskRng rng(seed);
  std::set<std::string> names;
  std::vector<PythonProject> projects;
  while (projects.size() < count) {
    std::string name = rng.choice(nouns) + "_" + rng.choice(nouns);
    if (!names.insert(name).second) continue;
    std::vector<ClassSpec> classes;
    std::set<std::string> used;
    const auto num_classes = static_cast<size_t>(rng.uniform_int(3, 5));
    while (classes.size() < num_classes) {
      const std::string noun = rng.choice(nouns);
      const std::string suffix = rng.choice(kSuffixes);
      if (!used.insert(noun).second) continue;
      classes.push_back({capitalise(noun) + suffix, noun + "_" + lower(suffix)});
    }
    projects.push_back(ProjectWriter(name, classes, rng.next_u64()).write());
  }
  return projects;
}

namespace {

constexpr uintmax_t kMaxPythonFileBytes = 1 << 20;

bool hidden(const fs::path& p) {
  const std::string name = p.filename().string();
  return !name.empty() && name[0] == '.';
}

// The .py files under `root` (at any depth when `recursive`), as (path relative to `base`, text).
std::vector<PythonFile> python_files(const fs::path& root, const fs::path& base, bool recursive) {
  std::vector<PythonFile> files;
  auto take = [&](const fs::directory_entry& entry) {
    if (!entry.is_regular_file() || entry.path().extension() != ".py" || hidden(entry.path())) return;
    if (entry.file_size() > kMaxPythonFileBytes) return;
    std::string text = read_text_file(entry.path().string());
    if (invalid_utf8_offset(text) != std::string::npos) return;
    files.push_back({fs::relative(entry.path(), base).generic_string(), std::move(text)});
  };
  if (recursive) {
    for (auto it = fs::recursive_directory_iterator(root, fs::directory_options::skip_permission_denied);
         it != fs::recursive_directory_iterator(); ++it) {
      if (it->is_directory() && hidden(it->path())) {
        it.disable_recursion_pending();
        continue;
      }
      take(*it);
    }
  } else {
    for (const auto& entry : fs::directory_iterator(root)) take(entry);
  }
  std::sort(files.begin(), files.end(), [](const PythonFile& a, const PythonFile& b) { return a.path < b.path; });
  return files;
}

}  // namespace

std::vector<PythonProject> load_python_projects(const std::string& directory) {
  SWARMT_CHECK_INPUT(fs::is_directory(directory), directory, ": project directory does not exist");
  const fs::path base(directory);
  std::vector<PythonProject> projects;
  try {
    auto loose = python_files(base, base, false);
    if (!loose.empty()) {
      std::string name = fs::absolute(base).lexically_normal().filename().string();
      if (name.empty()) name = fs::absolute(base).lexically_normal().parent_path().filename().string();
      projects.push_back({name, std::move(loose)});
    }
    std::vector<fs::path> subdirectories;
    for (const auto& entry : fs::directory_iterator(base))
      if (entry.is_directory() && !hidden(entry.path())) subdirectories.push_back(entry.path());
    std::sort(subdirectories.begin(), subdirectories.end());
    for (const auto& sub : subdirectories) {
      auto files = python_files(sub, base, true);
      if (!files.empty()) projects.push_back({sub.filename().string(), std::move(files)});
    }
  } catch (const fs::filesystem_error& e) {
    throw_input_error(directory, ": cannot read the project directory: ", e.what());
  }
  SWARMT_CHECK_INPUT(!projects.empty(), directory, ": no .py file found (expected one subdirectory per project)");
  return projects;
}

void write_python_projects(const std::vector<PythonProject>& projects, const std::string& directory) {
  for (const auto& project : projects) {
    for (const auto& file : project.files) {
      const fs::path path = fs::path(directory) / file.path;
      std::error_code ec;
      fs::create_directories(path.parent_path(), ec);
      SWARMT_CHECK_INPUT(!ec, path.parent_path().string(), ": cannot create directory: ", ec.message());
      std::ofstream out(path, std::ios::binary);
      out << file.text;
      SWARMT_CHECK_INPUT(out.good(), path.string(), ": cannot write");
    }
  }
}

}  // namespace swarmt::data
