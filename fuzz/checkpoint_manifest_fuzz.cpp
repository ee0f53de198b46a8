// Fuzzes checkpoint manifests: the bytes replace manifest.json of a real checkpoint (written once by
// CheckpointWriter), which is then verified at full level and looked up as the run's latest checkpoint.
// A manifest can be damaged or hand-edited; it must never make swarmt read outside the checkpoint
// ("../../x", "/etc/passwd"), crash, or accept a file that does not match it.
#include <filesystem>

#include "fuzz_harness.h"
#include "swarmt/core/checkpoint.h"
#include "swarmt/core/json.h"
#include "swarmt/core/error.h"

namespace fs = std::filesystem;

namespace swarmt::fuzz {
namespace {

constexpr int64_t kStep = 7;

std::string write_checkpoint(const std::string& run_dir) {
  CheckpointWriter writer(run_dir, kStep);
  writer.add_file("model.safetensors", std::string(100, 'm'));
  writer.add_file("optimizer.safetensors", std::string(300, 'o'));
  writer.add_file("trainer_state.json", "{\"step\": 7}");
  writer.add_file("rng/state.bin", std::string(16, '\x01'));
  return writer.commit();
}

const std::string& run_dir() {
  static const std::string dir = [] {
    const std::string d = (fs::path(scratch_dir()) / "run").string();
    write_checkpoint(d);
    return d;
  }();
  return dir;
}

}  // namespace

void fuzz_one(const uint8_t* data, size_t size) {
  const std::string checkpoint = (fs::path(run_dir()) / checkpoint_dir_name(kStep)).string();
  write_file((fs::path(checkpoint) / kCheckpointManifest).string(), data, size);

  const auto latest = latest_valid_checkpoint(run_dir());
  bool valid = false;
  try {
    const CheckpointManifest manifest = verify_checkpoint(checkpoint, VerifyLevel::Full);
    valid = true;
    FUZZ_REQUIRE(manifest.step == kStep, "a valid manifest's step matches the directory name");
    for (const auto& [name, entry] : manifest.files) {
      const fs::path path = fs::path(checkpoint) / name;
      FUZZ_REQUIRE(fs::is_regular_file(path), "listed files exist inside the checkpoint: " + name);
      FUZZ_REQUIRE(fs::file_size(path) == entry.bytes, "listed sizes match: " + name);
      const std::string relative = fs::path(name).lexically_normal().generic_string();
      FUZZ_REQUIRE(relative.rfind("..", 0) != 0 && !fs::path(name).is_absolute(), "files stay inside: " + name);
    }
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::BadInput) throw;
  }
  FUZZ_REQUIRE(latest.has_value() == valid, "latest_valid_checkpoint agrees with verify_checkpoint");
  // The policy check of fuzz_main.cpp applies to verify's error too: run it once more uncaught.
  if (!valid) verify_checkpoint(checkpoint, VerifyLevel::Full);
}

void write_seeds(const SeedWriter& seeds) {
  const std::string dir = write_checkpoint((fs::path(scratch_dir()) / "seed-run").string());
  const std::string manifest = read_file((fs::path(dir) / kCheckpointManifest).string());
  seeds.add("manifest.json", manifest);
  Json parsed = Json::parse(manifest);
  parsed["files"].erase("rng/state.bin");
  seeds.add("manifest_subset.json", parsed.dump());
}

}  // namespace swarmt::fuzz
