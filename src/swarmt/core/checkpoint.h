// Training checkpoint directories: what the trainer writes to resume, and how a resume finds the newest
// checkpoint it can trust.
//
//   <run_dir>/checkpoint-00000200/
//       model.safetensors, optimizer.safetensors, trainer_state.json, ...   (whatever the caller adds)
//       manifest.json   {"format_version": 1, "step": 200,
//                        "files": {"model.safetensors": {"bytes": 123, "sha256": "ab12..."}, ...}}
//
// A checkpoint is built in a hidden temporary directory beside its final name; manifest.json is written
// last, then the directory is renamed into place (AtomicDirectory). So a directory named
// checkpoint-<step> without a manifest can only come from outside tampering or an older tool, and a file
// that no longer matches its size or hash was changed after the fact: both are reported precisely and
// never taken as valid.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "swarmt/core/atomic_file.h"

namespace swarmt {

constexpr int kCheckpointFormatVersion = 1;
constexpr const char* kCheckpointManifest = "manifest.json";

// "checkpoint-00000200" (at least 8 digits).
std::string checkpoint_dir_name(int64_t step);
// True (and the step) for names of the form checkpoint-<8 or more digits>.
bool parse_checkpoint_dir_name(const std::string& name, int64_t* step);

class CheckpointWriter {
 public:
  // Starts <run_dir>/checkpoint-<step> (run_dir is created if needed). Nothing is visible under the
  // final name until commit().
  CheckpointWriter(const std::string& run_dir, int64_t step);

  // Where the caller writes file `name` itself (e.g. write_safetensors(path_for("model.safetensors"),
  // ...)). `name` is a relative path without ".."; parent directories are created.
  std::string path_for(const std::string& name) const;
  // The size and SHA-256 of file `name` as its writer computed them while writing (write_safetensors
  // returns them), so that commit() need not read it again.
  void record(const std::string& name, FileDigest digest);
  // Writes `bytes` as file `name` (and records its digest).
  void add_file(const std::string& name, const std::string& bytes);
  void add_file(const std::string& name, const void* data, size_t size);

  // Writes manifest.json with the size and SHA-256 of every file in the directory (recorded ones as
  // recorded, the others hashed now), fsyncs, and renames the directory into place (replacing an
  // existing checkpoint of the same step safely). Returns the final path.
  std::string commit();

  int64_t step() const { return step_; }
  const std::string& target() const { return directory_.target(); }

 private:
  int64_t step_;
  AtomicDirectory directory_;
  std::map<std::string, FileDigest> recorded_;
};

struct ManifestEntry {
  uint64_t bytes = 0;
  std::string sha256;  // lower-case hex
};

struct CheckpointManifest {
  int format_version = kCheckpointFormatVersion;
  int64_t step = 0;
  std::map<std::string, ManifestEntry> files;
};

// Sizes: manifest valid and every listed file present with its size (cheap). Full: also sha256.
enum class VerifyLevel { Sizes, Full };

// The files a reader of the checkpoint opens (the trainer's: model, optimizer, trainer state). A manifest
// that does not list one of them cannot vouch for it, however well the listed files verify.
using RequiredFiles = std::vector<std::string>;

// Checks a checkpoint directory against its manifest; returns the manifest, or throws BadInput naming
// the file and the problem ("<dir>/optimizer.safetensors: sha256 mismatch (file changed or truncated)").
// Verification cannot pass vacuously: the manifest must list at least one file, every file of
// `required_files`, and every file in the directory (a file it does not list was put there afterwards).
CheckpointManifest verify_checkpoint(const std::string& dir, VerifyLevel level = VerifyLevel::Full,
                                     const RequiredFiles& required_files = {});

struct CheckpointStatus {
  int64_t step = 0;
  std::string path;
  bool valid = false;    // set by latest_valid_checkpoint / check_checkpoints
  std::string problem;   // why it is not valid
};

// The checkpoint-<step> directories of a run, by increasing step (not verified; temporary directories
// of writes in progress or interrupted are never listed). Empty if run_dir does not exist.
std::vector<CheckpointStatus> list_checkpoints(const std::string& run_dir);

// Every checkpoint of the run, verified at `level`.
std::vector<CheckpointStatus> check_checkpoints(const std::string& run_dir, VerifyLevel level,
                                                const RequiredFiles& required_files = {});

// The newest checkpoint that passes full verification. Newer ones that fail are skipped, each adding a
// warning line ("skipping <dir>: <problem>") to `warnings`, as do leftovers of interrupted writes.
std::optional<CheckpointStatus> latest_valid_checkpoint(const std::string& run_dir,
                                                        std::vector<std::string>* warnings = nullptr,
                                                        const RequiredFiles& required_files = {});

// Keeps the newest `keep_last` (>= 1) checkpoints that pass size verification and removes every
// checkpoint older than the oldest of those; broken checkpoints newer than it are left for inspection
// (and reported in `warnings`), and a broken one that is removed is reported too. Also removes leftover
// temporary directories of writers that are no longer running. Call it after a new checkpoint was
// committed. Returns the removed paths.
std::vector<std::string> prune_checkpoints(const std::string& run_dir, int keep_last,
                                           std::vector<std::string>* warnings = nullptr,
                                           const RequiredFiles& required_files = {});

// Moves a checkpoint that failed verification out of the way, to <run_dir>/broken/<name> (or
// <name>.2, .3, ... when that is taken), so that a run continuing without it neither overwrites nor
// deletes it. Returns the new path.
std::string set_aside_broken_checkpoint(const std::string& checkpoint_dir);

}  // namespace swarmt
