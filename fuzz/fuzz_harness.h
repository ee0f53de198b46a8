// The contract every swarmt fuzz harness (fuzz/<name>_fuzz.cpp) implements, and the helpers they share.
//
// A harness is one small file defining two functions:
//
//   void swarmt::fuzz::fuzz_one(const uint8_t* data, size_t size);   // feed the bytes to one parser
//   void swarmt::fuzz::write_seeds(const SeedWriter& seeds);         // valid inputs to start from
//
// fuzz_main.cpp turns them into a libFuzzer target. The outcome policy is the project's error rule: a
// parser may reject any input, but only by throwing swarmt::Error of kind BadInput whose message names the
// file it was reading. Everything else is a finding and aborts the run so libFuzzer saves the input: a
// sanitizer report, a crash, an Internal error, any other exception, and a broken postcondition checked
// with FUZZ_REQUIRE on what the parser accepted.
//
// Seeds: running a harness with SWARMT_FUZZ_WRITE_SEEDS=<dir> writes its seed corpus into <dir> and exits
// (scripts/fuzz.sh does this before fuzzing), so a harness and its seeds never drift apart.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace swarmt::fuzz {

// Writes seed files into one directory.
class SeedWriter {
 public:
  explicit SeedWriter(std::string directory) : directory_(std::move(directory)) {}
  const std::string& directory() const { return directory_; }
  // Writes `bytes` as seed `name` (a plain file name).
  void add(const std::string& name, const std::string& bytes) const;

 private:
  std::string directory_;
};

// Implemented by each harness.
void fuzz_one(const uint8_t* data, size_t size);
void write_seeds(const SeedWriter& seeds);

// The file name a harness passes as `source` to the parser; every BadInput message must contain it.
constexpr const char* kFuzzSource = "fuzzed-input";

// A directory private to this fuzzing process (created on first use, removed at exit), for harnesses
// whose parser reads files. Paths inside it contain kFuzzSource, so error messages naming a file name it.
const std::string& scratch_dir();

// Writes bytes to a file, replacing it (plain write: the harness is the only reader).
void write_file(const std::string& path, const void* data, size_t size);
inline void write_file(const std::string& path, const std::string& bytes) {
  write_file(path, bytes.data(), bytes.size());
}
std::string read_file(const std::string& path);

// Reports a finding and aborts (libFuzzer then saves the input as a crash artifact).
[[noreturn]] void report_finding(const char* file, int line, const std::string& what);

}  // namespace swarmt::fuzz

// A postcondition the parser promises for the inputs it accepts.
#define FUZZ_REQUIRE(cond, message)                                                                  \
  do {                                                                                               \
    if (!(cond)) ::swarmt::fuzz::report_finding(__FILE__, __LINE__, std::string("postcondition failed: " #cond ": ") + (message)); \
  } while (0)
