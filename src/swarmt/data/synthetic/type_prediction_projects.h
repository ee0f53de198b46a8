// Python projects for the type_prediction task: read from a directory (any annotated code the user
// has), or generated (our own small synthetic projects, the default and what the tests use).
//
// A generated project "<noun>_<noun>" is a package of four modules, each building on the previous ones:
//   models.py    dataclasses with annotated fields and methods; later classes refer to earlier ones
//   utils.py     text and number helpers with builtin-typed parameters, returns and locals
//   services.py  load / index / find functions per class, returning C, List[C], Dict[str, C], Optional[C]
//   app.py       entry points whose locals are annotated with the types the services return
// so the type of a local in app.py is determined by a return annotation in services.py (and an import),
// which a model must remember when the files are stacked with other projects in between.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace swarmt::data {

struct PythonFile {
  std::string path;  // relative to the corpus directory, e.g. "harbor_lantern/models.py"
  std::string text;
};

struct PythonProject {
  std::string name;
  std::vector<PythonFile> files;  // in path order
};

// `count` generated projects with distinct names, deterministic from `seed`.
std::vector<PythonProject> synthetic_python_projects(size_t count, uint64_t seed);

// The projects of a directory: each subdirectory holding .py files (at any depth) is one project, and
// .py files directly in the directory form one more (named after the directory). Hidden directories,
// files over 1 MiB and files that are not UTF-8 are skipped. BadInput naming the directory if it is
// missing or has no .py file.
std::vector<PythonProject> load_python_projects(const std::string& directory);

// Writes projects as files under `directory` (paths as in PythonFile::path), e.g. to look at them.
void write_python_projects(const std::vector<PythonProject>& projects, const std::string& directory);

}  // namespace swarmt::data
