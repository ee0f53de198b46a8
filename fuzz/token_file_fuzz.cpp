// Fuzzes token files: the first byte chooses the data file that goes with the sidecar, the remaining
// bytes are the sidecar JSON (<prefix>.json), and TokenFile::open reads the pair.
//
//   mode 0: <prefix>.tokens holds exactly num_tokens tokens (as far as the sidecar's num_tokens can be
//           read, up to 4096), so the fuzzer reaches the checks that follow the size check
//   mode 1: one token short;  mode 2: a size that is not a multiple of 4;  mode 3: no data file
//
// For accepted pairs it checks the promises of token_file.h: offsets start at 0, increase strictly and
// end at num_tokens; every token is readable; document_of() inverts the offsets.
#include <unistd.h>

#include <filesystem>
#include <vector>

#include "fuzz_harness.h"
#include "swarmt/core/json.h"
#include "swarmt/data/corpus/token_file.h"

namespace fs = std::filesystem;

namespace swarmt::fuzz {
namespace {

constexpr int64_t kMaxWrittenTokens = 4096;

// num_tokens as the sidecar states it, if it is a small non-negative integer; else 0.
int64_t declared_tokens(const std::string& sidecar) {
  const Json json = Json::parse(sidecar, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object() || !json.contains("num_tokens") || !json["num_tokens"].is_number_unsigned()) return 0;
  const uint64_t n = json["num_tokens"].get<uint64_t>();
  return n <= kMaxWrittenTokens ? static_cast<int64_t>(n) : 0;
}

std::string data_file_bytes(int mode, int64_t tokens) {
  if (mode == 1) tokens = tokens > 0 ? tokens - 1 : 1;
  std::string bytes;
  for (int64_t i = 0; i < tokens; ++i) {
    const uint32_t token = static_cast<uint32_t>((i * 7919) % 300);  // some ids beyond small vocabularies
    bytes.append(reinterpret_cast<const char*>(&token), 4);
  }
  if (mode == 2) bytes.append(1 + static_cast<size_t>(tokens % 3), '\x01');
  return bytes;
}

}  // namespace

void fuzz_one(const uint8_t* data, size_t size) {
  if (size == 0) return;
  const int mode = data[0] % 4;
  const std::string sidecar(reinterpret_cast<const char*>(data + 1), size - 1);
  const std::string prefix = (fs::path(scratch_dir()) / "shard").string();
  write_file(prefix + ".json", sidecar);
  if (mode == 3) {
    ::unlink((prefix + ".tokens").c_str());
  } else {
    write_file(prefix + ".tokens", data_file_bytes(mode, declared_tokens(sidecar)));
  }

  const data::TokenFile file = data::TokenFile::open(prefix + ".json");
  const std::vector<int64_t>& offsets = file.document_offsets();
  FUZZ_REQUIRE(!offsets.empty() && offsets.front() == 0, "offsets start at 0");
  FUZZ_REQUIRE(offsets.back() == file.num_tokens(), "offsets end at num_tokens");
  FUZZ_REQUIRE(file.num_documents() == static_cast<int64_t>(offsets.size()) - 1, "one document per offset pair");
  for (size_t i = 1; i < offsets.size(); ++i) FUZZ_REQUIRE(offsets[i] > offsets[i - 1], "offsets increase strictly");
  FUZZ_REQUIRE(file.vocab_size() >= 1, "vocab_size is positive");
  uint32_t checksum = 0;
  for (int64_t i = 0; i < file.num_tokens(); ++i) checksum ^= file.token(i);
  for (int64_t doc = 0; doc < file.num_documents(); ++doc) {
    FUZZ_REQUIRE(file.document_of(offsets[doc]) == doc, "document_of(first token of a document) is that document");
    FUZZ_REQUIRE(file.document_of(offsets[doc + 1] - 1) == doc, "document_of(last token of a document) is that document");
  }
  (void)checksum;
  file.validate_tokens();  // tokens outside the vocabulary: BadInput like any other input error
}

void write_seeds(const SeedWriter& seeds) {
  const std::string dir = (fs::path(scratch_dir()) / "seeds").string();
  fs::create_directories(dir);
  struct Case {
    const char* name;
    std::vector<std::vector<int32_t>> documents;
    Json tokenizer;
  };
  const std::vector<Case> cases = {
      {"empty", {}, Json::object()},
      {"one_document", {{1, 2, 3, 4, 5}}, {{"type", "byte"}}},
      {"three_documents", {{257, 72, 105, 258}, {257, 33, 258}, {7}}, {{"type", "byte"}, {"vocab_size", 259}}},
  };
  for (const Case& c : cases) {
    const std::string prefix = (fs::path(dir) / c.name).string();
    data::TokenFileWriter writer(prefix, 259, c.tokenizer);
    for (const auto& document : c.documents) writer.add_document(document);
    writer.commit();
    const std::string sidecar = read_file(prefix + ".json");
    for (int mode = 0; mode < 4; ++mode)
      seeds.add(std::string(c.name) + "_mode" + std::to_string(mode), std::string(1, static_cast<char>(mode)) + sidecar);
  }
}

}  // namespace swarmt::fuzz
