#include "swarmt/core/checkpoint.h"
#include "swarmt/core/remove_tree.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "swarmt/core/dead_writers.h"
#include "swarmt/core/error.h"
#include "swarmt/core/json.h"
#include "swarmt/core/kill_point.h"
#include "swarmt/core/sha256.h"

namespace fs = std::filesystem;

namespace swarmt {
namespace {

// File names inside a checkpoint: relative, no "..", no empty components, not the manifest itself.
void check_file_name(const std::string& name, const std::string& where) {
  bool ok = !name.empty() && name.front() != '/' && name.back() != '/' && name.find('\0') == std::string::npos;
  for (const auto& part : fs::path(name)) ok = ok && part != ".." && part != "." && !part.empty();
  SWARMT_CHECK_INPUT(ok, where, ": invalid file name \"", name, "\" (must be a relative path inside the checkpoint)");
}

bool is_checkpoint_temp(const std::string& name) {
  return is_temp_name(name) && name.rfind(".checkpoint-", 0) == 0;
}

std::vector<std::string> leftover_temp_dirs(const std::string& run_dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(run_dir, ec))
    if (is_checkpoint_temp(entry.path().filename().string())) out.push_back(entry.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

std::string checkpoint_dir_name(int64_t step) {
  SWARMT_CHECK_INPUT(step >= 0, "checkpoint step must be non-negative (got ", step, ")");
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "checkpoint-%08lld", static_cast<long long>(step));
  return buffer;
}

bool parse_checkpoint_dir_name(const std::string& name, int64_t* step) {
  const std::string prefix = "checkpoint-";
  if (name.rfind(prefix, 0) != 0) return false;
  const std::string digits = name.substr(prefix.size());
  if (digits.size() < 8 || digits.size() > 18) return false;
  if (!std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) return false;
  *step = std::stoll(digits);
  return true;
}

// -------------------------------------------------------------------------------------------- writer

CheckpointWriter::CheckpointWriter(const std::string& run_dir, int64_t step)
    : step_(step), directory_((fs::path(run_dir) / checkpoint_dir_name(step)).string()) {}

std::string CheckpointWriter::path_for(const std::string& name) const {
  check_file_name(name, directory_.target());
  SWARMT_CHECK_INPUT(name != kCheckpointManifest, directory_.target(), ": ", kCheckpointManifest,
                     " is written by the checkpoint itself");
  fs::path path = fs::path(directory_.path()) / name;
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  return path.string();
}

void CheckpointWriter::add_file(const std::string& name, const std::string& bytes) {
  add_file(name, bytes.data(), bytes.size());
}

void CheckpointWriter::record(const std::string& name, FileDigest digest) {
  check_file_name(name, directory_.target());
  recorded_[name] = std::move(digest);
}

void CheckpointWriter::add_file(const std::string& name, const void* data, size_t size) {
  const std::string path = path_for(name);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
  out.close();
  SWARMT_CHECK_INPUT(out.good(), path, ": write failed");
  record(name, {size, sha256_hex(data, size)});
  kill_point("checkpoint.file_added");
}

std::string CheckpointWriter::commit() {
  Json files = Json::object();
  const fs::path root(directory_.path());
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    if (entry.is_directory()) continue;
    const std::string name = entry.path().lexically_relative(root).generic_string();
    SWARMT_CHECK_INPUT(entry.is_regular_file(), entry.path().string(), ": only regular files can go into a checkpoint");
    auto recorded = recorded_.find(name);
    FileDigest digest;
    if (recorded != recorded_.end()) digest = recorded->second;
    else digest.sha256 = sha256_file_hex(entry.path().string(), &digest.bytes);
    files[name] = {{"bytes", digest.bytes}, {"sha256", digest.sha256}};
  }
  const Json manifest = {{"format_version", kCheckpointFormatVersion}, {"step", step_}, {"files", files}};
  const std::string text = manifest.dump(2) + "\n";
  std::ofstream out((root / kCheckpointManifest).string(), std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  SWARMT_CHECK_INPUT(out.good(), (root / kCheckpointManifest).string(), ": write failed");
  kill_point("checkpoint.manifest_written");
  directory_.commit();
  return directory_.target();
}

// ------------------------------------------------------------------------------------------- reading

CheckpointManifest verify_checkpoint(const std::string& dir, VerifyLevel level, const RequiredFiles& required_files) {
  std::error_code ec;
  SWARMT_CHECK_INPUT(fs::is_directory(dir, ec), dir, ": not a checkpoint directory (does not exist)");
  const std::string manifest_path = (fs::path(dir) / kCheckpointManifest).string();
  SWARMT_CHECK_INPUT(fs::exists(manifest_path, ec), dir, ": ", kCheckpointManifest,
                     " is missing (incomplete or interrupted checkpoint write)");
  const Json root = read_json_file(manifest_path);
  const JsonView view(root, manifest_path);
  CheckpointManifest manifest;
  manifest.format_version = static_cast<int>(view.get_int("format_version"));
  SWARMT_CHECK_INPUT(manifest.format_version == kCheckpointFormatVersion, manifest_path, ": unsupported format_version ",
                     manifest.format_version, " (this swarmt reads ", kCheckpointFormatVersion, ")");
  manifest.step = view.get_int("step");
  int64_t dir_step = -1;
  if (parse_checkpoint_dir_name(fs::path(dir).filename().string(), &dir_step)) {
    SWARMT_CHECK_INPUT(dir_step == manifest.step, manifest_path, ": step ", manifest.step,
                       " does not match the directory name (step ", dir_step, ")");
  }
  const JsonView files = view.object("files");
  for (auto it = files.json().begin(); it != files.json().end(); ++it) {
    const std::string& name = it.key();
    check_file_name(name, manifest_path);
    const JsonView file = files.object(name);
    ManifestEntry entry;
    const int64_t bytes = file.get_int("bytes");
    SWARMT_CHECK_INPUT(bytes >= 0, file.describe("bytes"), " must be non-negative");
    entry.bytes = static_cast<uint64_t>(bytes);
    entry.sha256 = file.get_string("sha256");
    SWARMT_CHECK_INPUT(entry.sha256.size() == 64, file.describe("sha256"), " must be 64 hexadecimal digits");
    manifest.files[name] = entry;
  }
  SWARMT_CHECK_INPUT(!manifest.files.empty(), manifest_path, ": lists no files (a checkpoint without files cannot "
                     "be verified)");
  for (const std::string& name : required_files)
    SWARMT_CHECK_INPUT(manifest.files.count(name) > 0, manifest_path, ": does not list ", name,
                       ", which every checkpoint must hold");
  const fs::path checkpoint_root(dir);
  for (const auto& entry : fs::recursive_directory_iterator(checkpoint_root)) {
    if (entry.is_directory()) continue;
    const std::string name = entry.path().lexically_relative(checkpoint_root).generic_string();
    SWARMT_CHECK_INPUT(name == kCheckpointManifest || manifest.files.count(name) > 0, entry.path().string(),
                       ": not listed in ", kCheckpointManifest, " (added after the checkpoint was written)");
  }
  // Check every file's presence and size before hashing anything: those are the cheap, common failures.
  for (const auto& [name, entry] : manifest.files) {
    const std::string path = (fs::path(dir) / name).string();
    SWARMT_CHECK_INPUT(fs::is_regular_file(path, ec), path, ": missing (listed in ", kCheckpointManifest, ")");
    const uint64_t actual = fs::file_size(path, ec);
    SWARMT_CHECK_INPUT(!ec && actual == entry.bytes, path, ": size ", actual, " bytes, but ", kCheckpointManifest,
                       " says ", entry.bytes, " (file truncated or changed)");
  }
  if (level == VerifyLevel::Full) {
    for (const auto& [name, entry] : manifest.files) {
      const std::string path = (fs::path(dir) / name).string();
      SWARMT_CHECK_INPUT(sha256_file_hex(path) == entry.sha256, path, ": sha256 mismatch (file changed or truncated)");
    }
  }
  return manifest;
}

std::vector<CheckpointStatus> list_checkpoints(const std::string& run_dir) {
  std::vector<CheckpointStatus> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(run_dir, ec)) {
    CheckpointStatus status;
    if (!entry.is_directory() || !parse_checkpoint_dir_name(entry.path().filename().string(), &status.step)) continue;
    status.path = entry.path().string();
    out.push_back(status);
  }
  std::sort(out.begin(), out.end(), [](const CheckpointStatus& a, const CheckpointStatus& b) { return a.step < b.step; });
  return out;
}

std::vector<CheckpointStatus> check_checkpoints(const std::string& run_dir, VerifyLevel level,
                                                const RequiredFiles& required_files) {
  std::vector<CheckpointStatus> out = list_checkpoints(run_dir);
  for (CheckpointStatus& status : out) {
    try {
      verify_checkpoint(status.path, level, required_files);
      status.valid = true;
    } catch (const Error& e) {
      status.problem = e.what();
    }
  }
  return out;
}

std::optional<CheckpointStatus> latest_valid_checkpoint(const std::string& run_dir, std::vector<std::string>* warnings,
                                                        const RequiredFiles& required_files) {
  auto warn = [&](const std::string& line) {
    if (warnings) warnings->push_back(line);
  };
  for (const std::string& temp : leftover_temp_dirs(run_dir))
    warn(str_cat("ignoring ", temp, ": temporary directory of an unfinished checkpoint write"));
  std::vector<CheckpointStatus> all = list_checkpoints(run_dir);
  for (auto it = all.rbegin(); it != all.rend(); ++it) {
    try {
      verify_checkpoint(it->path, VerifyLevel::Full, required_files);
      it->valid = true;
      return *it;
    } catch (const Error& e) {
      it->problem = e.what();
      warn(str_cat("skipping ", it->path, ": ", it->problem));
    }
  }
  return std::nullopt;
}

std::vector<std::string> prune_checkpoints(const std::string& run_dir, int keep_last, std::vector<std::string>* warnings,
                                           const RequiredFiles& required_files) {
  SWARMT_CHECK_INPUT(keep_last >= 1, run_dir, ": the number of checkpoints to keep must be at least 1 (got ", keep_last, ")");
  std::vector<std::string> removed;
  std::vector<CheckpointStatus> all = check_checkpoints(run_dir, VerifyLevel::Sizes, required_files);
  int valid_seen = 0;
  for (auto it = all.rbegin(); it != all.rend(); ++it) {
    if (valid_seen >= keep_last) {
      if (!it->valid && warnings)
        warnings->push_back(str_cat("removing broken ", it->path, " (older than the ", keep_last,
                                    " kept checkpoints): ", it->problem));
      // Renamed out of sight first: a process killed during the removal must not leave a half-deleted
      // checkpoint under its final name. The hidden leftover is removed by a later prune.
      const std::string doomed = sibling_temp_path(it->path, "old");
      const bool hidden = ::rename(it->path.c_str(), doomed.c_str()) == 0;
      kill_point("checkpoint.pruned_not_removed");
      remove_tree(hidden ? doomed : it->path);
      removed.push_back(it->path);
    } else if (it->valid) {
      ++valid_seen;
    } else if (warnings) {
      warnings->push_back(str_cat("keeping broken ", it->path, " for inspection: ", it->problem));
    }
  }
  for (const std::string& temp : remove_leftovers_of_dead_writers(run_dir, {".checkpoint-"})) removed.push_back(temp);
  return removed;
}

std::string set_aside_broken_checkpoint(const std::string& checkpoint_dir) {
  const fs::path source(checkpoint_dir);
  const fs::path broken_dir = source.parent_path() / "broken";
  std::error_code ec;
  fs::create_directories(broken_dir, ec);
  SWARMT_CHECK_INPUT(!ec, broken_dir.string(), ": cannot create (", ec.message(), ")");
  fs::path target = broken_dir / source.filename();
  for (int n = 2; fs::exists(fs::symlink_status(target, ec)); ++n)
    target = broken_dir / (source.filename().string() + "." + std::to_string(n));
  SWARMT_CHECK_INPUT(::rename(checkpoint_dir.c_str(), target.c_str()) == 0, checkpoint_dir, ": cannot move it to ",
                     target.string(), " (", std::strerror(errno), ")");
  fsync_path(source.parent_path().string());
  return target.string();
}

}  // namespace swarmt
