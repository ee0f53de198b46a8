// libFuzzer entry points shared by every harness (see fuzz_harness.h for the contract).
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <typeinfo>

#include "fuzz_harness.h"
#include "swarmt/core/error.h"
#include "swarmt/core/remove_tree.h"

namespace fs = std::filesystem;

namespace swarmt::fuzz {
namespace {

std::string& scratch_path() {
  static std::string path;
  return path;
}

void remove_scratch() {
  if (!scratch_path().empty()) remove_tree(scratch_path());
}

}  // namespace

void SeedWriter::add(const std::string& name, const std::string& bytes) const {
  write_file((fs::path(directory_) / name).string(), bytes);
}

const std::string& scratch_dir() {
  std::string& path = scratch_path();
  if (path.empty()) {
    std::string pattern = (fs::temp_directory_path() / (std::string("swarmt-") + kFuzzSource + "-XXXXXX")).string();
    if (::mkdtemp(pattern.data()) == nullptr) report_finding(__FILE__, __LINE__, "cannot create a scratch directory");
    path = pattern;
    std::atexit(remove_scratch);
  }
  return path;
}

void write_file(const std::string& path, const void* data, size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
  out.close();
  if (!out) report_finding(__FILE__, __LINE__, "cannot write " + path);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void report_finding(const char* file, int line, const std::string& what) {
  std::fprintf(stderr, "\n==swarmt-fuzz== FINDING at %s:%d\n%s\n", file, line, what.c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace swarmt::fuzz

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  if (const char* dir = std::getenv("SWARMT_FUZZ_WRITE_SEEDS")) {
    std::error_code ec;
    fs::create_directories(dir, ec);
    try {
      swarmt::fuzz::write_seeds(swarmt::fuzz::SeedWriter(dir));
    } catch (const std::exception& e) {
      std::fprintf(stderr, "writing seeds failed: %s\n", e.what());
      std::exit(1);
    }
    std::exit(0);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using swarmt::fuzz::report_finding;
  try {
    swarmt::fuzz::fuzz_one(data, size);
  } catch (const swarmt::Error& e) {
    const std::string message = e.what();
    if (e.kind() != swarmt::ErrorKind::BadInput) report_finding(__FILE__, __LINE__, "Internal error: " + message);
    // The error rule: a rejection names the file it was reading.
    if (message.find(swarmt::fuzz::kFuzzSource) == std::string::npos)
      report_finding(__FILE__, __LINE__, "BadInput message does not name the file: " + message);
  } catch (const std::exception& e) {
    report_finding(__FILE__, __LINE__, std::string("exception other than swarmt::Error (") + typeid(e).name() + "): " + e.what());
  } catch (...) {
    report_finding(__FILE__, __LINE__, "exception of a type that is not std::exception");
  }
  return 0;
}
