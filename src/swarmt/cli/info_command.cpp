// `swarmt info`: what is in a checkpoint, and what this machine runs.
//   swarmt info PATH [--json]           every tensor of a .safetensors file or model directory (name,
//                                       dtype, shape, bytes), totals, metadata, and for a directory a
//                                       summary of config.json and armt_config.json
//   swarmt info --system [--json]       CPU features, BLAS library and core, threads, libtorch, GEMM rate
#include <cstdlib>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <memory>
#include <sstream>

#include "swarmt/cli/command.h"
#include "swarmt/core/blas_check.h"
#include "swarmt/core/json.h"
#include "swarmt/core/nonfinite.h"
#include "swarmt/core/safetensors_set.h"
#include "swarmt/core/threads.h"
#include "swarmt/ops/gemm_rate.h"
#include "swarmt/ops/parallel.h"

namespace swarmt::cli {
namespace {

struct InfoOptions {
  std::string path;
  bool system = false;
  bool json = false;
};

// An environment variable's value, "" when unset.
std::string env_text(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

int run_system_info(const InfoOptions& opts) {
  CpuFeatures cpu = detect_cpu_features();
  BlasReport blas = current_blas_report();
  double gemm = measure_gemm_gflops(/*n=*/1024, /*min_seconds=*/0.3);
  const int kernel_threads = ops::parallel_for_threads();
  Json out = {
      {"swarmt_version", SWARMT_VERSION},
      {"torch_version", TORCH_VERSION},
      {"cpu_features", cpu.summary()},
      {"cores", available_cores()},
      {"intra_op_threads", at::get_num_threads()},
      {"kernel_threads", kernel_threads},
      {"blas_library", blas.library},
      {"blas_is_openblas", blas.is_openblas},
      {"openblas_core", blas.corename},
      {"openblas_core_switched_from", blas.original_core},
      {"openblas_core_switch_rejected", blas.switch_rejected},
      {"openblas_coretype_env", blas.coretype_env},
      {"omp_wait_policy", env_text("OMP_WAIT_POLICY")},
      {"omp_spin_count", env_text("GOMP_SPINCOUNT")},
      {"openblas_thread_timeout", env_text("OPENBLAS_THREAD_TIMEOUT")},
      {"gemm_check_rel_error", verify_blas_gemm()},
      {"fp32_gemm_gflops", gemm},
      {"cuda_available", torch::cuda::is_available()},
  };
  if (opts.json) {
    std::cout << out.dump(2) << std::endl;
    return 0;
  }
  std::cout << "swarmt        " << SWARMT_VERSION << " (libtorch " << TORCH_VERSION << ")\n"
            << "cpu           " << cpu.summary() << "\n"
            << "cores         " << available_cores() << " (libtorch intra-op threads: " << at::get_num_threads()
            << ")\n"
            << "kernels       " << kernel_threads
            << (kernel_threads > 1 ? " threads" : " thread")
            << (kernel_threads == 1 && at::get_num_threads() > 1
                    ? " (built without OpenMP: swarmt's own kernels run serially; cmake -DSWARMT_OPENMP=ON)"
                    : "")
            << "\n"
            << "blas          " << blas.describe() << "\n"
            << "waiting       OMP_WAIT_POLICY=" << env_text("OMP_WAIT_POLICY")
            << ", GOMP_SPINCOUNT=" << env_text("GOMP_SPINCOUNT")
            << ", OPENBLAS_THREAD_TIMEOUT=" << env_text("OPENBLAS_THREAD_TIMEOUT") << " (log2 cycles)\n"
            << "fp32 gemm     " << static_cast<int>(gemm) << " GFLOP/s (1024x1024, measured now)\n"
            << "cuda          " << (torch::cuda::is_available() ? "available" : "not available") << std::endl;
  return 0;
}

// 1234567 -> "1,234,567"
std::string with_separators(uint64_t n) {
  std::string digits = std::to_string(n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

// The fields of config.json worth a glance; multimodal configs (Gemma 3) keep them under text_config.
Json summarize_model_config(const std::string& path) {
  const Json config = read_json_file(path);
  const JsonView view(config, path);
  const Json* text_config = config.contains("text_config") && config["text_config"].is_object() ? &config["text_config"] : nullptr;
  Json summary = Json::object();
  for (const char* key : {"model_type", "architectures", "hidden_size", "intermediate_size", "num_hidden_layers",
                          "num_attention_heads", "num_key_value_heads", "head_dim", "vocab_size",
                          "max_position_embeddings", "sliding_window", "rope_theta", "tie_word_embeddings",
                          "torch_dtype", "dtype"}) {
    if (view.has(key)) {
      summary[key] = config[key];
    } else if (text_config && text_config->contains(key) && !(*text_config)[key].is_null()) {
      summary[key] = (*text_config)[key];
    }
  }
  return summary;
}

// armt_config.json: every scalar field (its schema belongs to the ARMT model code).
Json summarize_scalar_fields(const std::string& path) {
  const Json config = read_json_file(path);
  const JsonView must_be_an_object(config, path);  // throws naming the file otherwise
  Json summary = Json::object();
  for (auto it = config.begin(); it != config.end(); ++it)
    if (it->is_primitive() || (it->is_array() && it->size() <= 16)) summary[it.key()] = *it;
  return summary;
}

std::string render_fields(const Json& fields) {
  std::string out;
  for (auto it = fields.begin(); it != fields.end(); ++it) {
    out += (out.empty() ? "" : " ") + it.key() + "=" + (it->is_string() ? it->get<std::string>() : it->dump());
  }
  return out;
}

int run_model_info(const InfoOptions& opts) {
  namespace fs = std::filesystem;
  // An ARMT adapter directory keeps its tensors in armt.safetensors (the base has its own directory).
  const bool adapter = fs::is_directory(opts.path) && fs::exists(fs::path(opts.path) / "armt_config.json") &&
                       !fs::exists(fs::path(opts.path) / "config.json");
  const SafetensorsSet set = SafetensorsSet::open(adapter ? (fs::path(opts.path) / "armt.safetensors").string() : opts.path);
  uint64_t parameters = 0, bytes = 0;
  Json tensors = Json::array();
  for (const std::string& name : set.names()) {
    const SafetensorsFile& file = set.file_of(name);
    const TensorEntry& entry = file.entry(name);
    parameters += static_cast<uint64_t>(entry.numel());
    bytes += entry.nbytes();
    tensors.push_back({{"name", name}, {"dtype", dtype_name(entry.dtype)}, {"shape", entry.shape},
                       {"bytes", entry.nbytes()}, {"file", fs::path(file.path()).filename().string()}});
  }
  Json files = Json::array();
  for (const SafetensorsFile& file : set.files()) files.push_back(fs::path(file.path()).filename().string());
  // Weights holding NaN or Inf: every other command refuses them (core/nonfinite.h); info shows which.
  Json nonfinite = Json::array();
  for (const NonFiniteTensor& t : find_nonfinite_tensors(TensorStore::open(set.path())))
    nonfinite.push_back({{"name", t.name}, {"file", fs::path(t.file).filename().string()},
                         {"nonfinite_values", t.bad_values}, {"numel", t.numel}});

  Json out = {{"path", opts.path}, {"sharded", set.sharded()}, {"files", files}, {"total_tensors", set.size()},
              {"total_parameters", parameters}, {"total_bytes", bytes}, {"metadata", set.metadata()}};
  if (set.sharded()) out["index_metadata"] = set.index_metadata();
  out["nonfinite_tensors"] = nonfinite;
  std::error_code ec;
  if (fs::is_directory(opts.path, ec)) {
    const fs::path dir(opts.path);
    if (fs::exists(dir / "config.json", ec)) out["config"] = summarize_model_config((dir / "config.json").string());
    if (fs::exists(dir / "armt_config.json", ec))
      out["armt_config"] = summarize_scalar_fields((dir / "armt_config.json").string());
  }
  out["tensors"] = tensors;
  if (opts.json) {
    std::cout << out.dump(2) << std::endl;
    return 0;
  }

  size_t name_width = 4, shape_width = 5;
  for (const Json& t : tensors) {
    name_width = std::max(name_width, t["name"].get<std::string>().size());
    shape_width = std::max(shape_width, shape_to_string(t["shape"].get<std::vector<int64_t>>()).size());
  }
  std::ostringstream text;
  text << opts.path << ": " << set.files().size() << (set.files().size() == 1 ? " file" : " files")
       << (set.sharded() ? " (sharded)" : "") << "\n";
  text << std::left << std::setw(static_cast<int>(name_width)) << "name" << "  " << std::setw(5) << "dtype" << "  "
       << std::setw(static_cast<int>(shape_width)) << "shape" << "  " << std::right << std::setw(14) << "bytes"
       << (set.sharded() ? "  file" : "") << "\n";
  for (const Json& t : tensors) {
    text << std::left << std::setw(static_cast<int>(name_width)) << t["name"].get<std::string>() << "  " << std::setw(5)
         << t["dtype"].get<std::string>() << "  " << std::setw(static_cast<int>(shape_width))
         << shape_to_string(t["shape"].get<std::vector<int64_t>>()) << "  " << std::right << std::setw(14)
         << with_separators(t["bytes"].get<uint64_t>()) << (set.sharded() ? "  " + t["file"].get<std::string>() : "")
         << "\n";
  }
  text << "total: " << with_separators(set.size()) << " tensors, " << with_separators(parameters) << " parameters, "
       << with_separators(bytes) << " bytes\n";
  for (const Json& t : nonfinite)
    text << "WARNING: tensor " << t["name"].get<std::string>() << " holds " << t["nonfinite_values"].get<int64_t>()
         << " NaN or infinite values (of " << t["numel"].get<int64_t>() << "): the weights are broken\n";
  if (!set.metadata().empty()) text << "metadata: " << render_fields(out["metadata"]) << "\n";
  if (out.contains("config")) text << "config.json: " << render_fields(out["config"]) << "\n";
  if (out.contains("armt_config")) text << "armt_config.json: " << render_fields(out["armt_config"]) << "\n";
  std::cout << text.str() << std::flush;
  return 0;
}

}  // namespace

void register_info(CLI::App& app, const GlobalOptions& globals, CommandList& commands) {
  auto opts = std::make_shared<InfoOptions>();
  CLI::App* cmd = app.add_subcommand("info", "Describe a safetensors file / model directory, or this machine");
  cmd->add_option("path", opts->path, "A .safetensors file or a model directory");
  cmd->add_flag("--system", opts->system, "Describe the machine: CPU, BLAS kernels, threads, GEMM rate");
  cmd->add_flag("--json", opts->json, "Machine-readable output");
  commands.push_back({cmd, [opts]() -> int {
                        if (opts->system || opts->path.empty()) return run_system_info(*opts);
                        return run_model_info(*opts);
                      }});
}

}  // namespace swarmt::cli
