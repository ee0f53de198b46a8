#include "swarmt/data/corpus/text_corpus_prepare.h"

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>

#include "swarmt/core/dead_writers.h"
#include "swarmt/core/error.h"
#include "swarmt/core/random.h"
#include "swarmt/core/run_lock.h"
#include "swarmt/core/sha256.h"
#include "swarmt/data/corpus/text_corpus.h"
#include "swarmt/data/corpus/token_file.h"

namespace swarmt::data {

namespace {

// FNV-1a, 64 bit: a fast, stable hash of the document text (the split must not change between
// versions or machines).
uint64_t fnv1a64(const std::string& text) {
  uint64_t h = 0xCBF29CE484222325ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001B3ull;
  }
  return h;
}

}  // namespace

bool is_validation_document(const std::string& text, double fraction, uint64_t seed) {
  if (fraction <= 0) return false;
  return uniform_from_key(mix_key(fnv1a64(text), seed)) < fraction;
}

PrepareSummary prepare_token_files(const PrepareOptions& options, const TextTokenizer& tokenizer,
                                   const std::function<void(const PrepareSummary&)>& progress) {
  SWARMT_CHECK_INPUT(!options.inputs.empty(), "data prepare: no input files given");
  SWARMT_CHECK_INPUT(!options.out_prefix.empty(), "data prepare: no output prefix given");
  SWARMT_CHECK_INPUT(options.validation_fraction >= 0 && options.validation_fraction < 1,
                     "data prepare: --validation-fraction must be in [0, 1) (got ", options.validation_fraction, ")");
  SWARMT_CHECK_INPUT(!options.add_eos || tokenizer.ids.eos >= 0,
                     "data prepare: --add-eos was given but the tokenizer has no eos token");
  // Open every input first, so a typo in the last file name fails before minutes of tokenizing.
  std::vector<std::string> formats;
  for (const auto& path : options.inputs) {
    formats.push_back(resolve_document_format(path, options.format));
    SWARMT_CHECK_INPUT(std::filesystem::is_regular_file(path), path, ": no such file");
  }
  const auto out_dir = std::filesystem::path(options.out_prefix).parent_path();
  SWARMT_CHECK_INPUT(out_dir.empty() || std::filesystem::is_directory(out_dir), "--out ", options.out_prefix,
                     ": directory ", out_dir.string(), " does not exist");
  const std::string name = std::filesystem::path(options.out_prefix).filename().string();
  SWARMT_CHECK_INPUT(!name.empty() && name != "." && name != "..", "--out ", options.out_prefix,
                     ": give a file name prefix (PREFIX.tokens, PREFIX.json are written), not a directory");
  for (const std::string& output : {options.out_prefix + ".tokens", options.out_prefix + ".json",
                                    options.out_prefix + "-validation.tokens", options.out_prefix + "-validation.json"})
    SWARMT_CHECK_INPUT(!std::filesystem::is_directory(output), "--out ", options.out_prefix, ": ", output,
                       " is a directory");
  // One writer per output prefix for the rest of the run; then the temporary files of earlier runs that
  // were killed (".tmp-<pid>" of a process that is gone) are removed.
  const std::string dir = out_dir.empty() ? std::string(".") : out_dir.string();
  const RunLock lock = RunLock::acquire_file(dir + "/." + name + ".lock", "--out " + options.out_prefix);
  remove_leftovers_of_dead_writers(dir, {name + ".tokens.tmp-", name + ".json.tmp-", name + "-validation.tokens.tmp-",
                                         name + "-validation.json.tmp-"});

  const Json info = {{"spec", options.tokenizer_spec},
                     {"vocab_size", tokenizer.tokenizer.vocab_size()},
                     {"bos_id", tokenizer.ids.bos},
                     {"eos_id", tokenizer.ids.eos},
                     {"add_eos", options.add_eos},
                     {"tokenizer_json_sha256", sha256_hex(tokenizer.tokenizer_json)}};
  const int64_t vocab_size = tokenizer.tokenizer.vocab_size();
  TokenFileWriter train(options.out_prefix, vocab_size, info);
  std::optional<TokenFileWriter> validation;
  if (options.validation_fraction > 0) validation.emplace(options.out_prefix + "-validation", vocab_size, info);

  PrepareSummary summary;
  const auto start = std::chrono::steady_clock::now();
  std::vector<int32_t> ids;
  for (size_t i = 0; i < options.inputs.size(); ++i) {
    const auto& path = options.inputs[i];
    auto stream = formats[i] == "jsonl" ? open_jsonl_documents(path, options.field)
                                        : open_text_documents(path, options.split_paragraphs);
    Document doc;
    while (stream->next(doc)) {
      if (is_blank_text(doc.text)) {
        ++summary.skipped_documents;
        continue;
      }
      std::vector<int32_t> encoded;
      try {
        encoded = tokenizer.tokenizer.encode(doc.text, false);
      } catch (const Error& e) {
        throw_input_error(doc.where, ": ", e.what());
      }
      if (encoded.empty()) {
        ++summary.skipped_documents;
        continue;
      }
      ids.clear();
      if (tokenizer.ids.bos >= 0) ids.push_back(static_cast<int32_t>(tokenizer.ids.bos));
      ids.insert(ids.end(), encoded.begin(), encoded.end());
      if (options.add_eos) ids.push_back(static_cast<int32_t>(tokenizer.ids.eos));
      summary.input_bytes += static_cast<int64_t>(doc.text.size());
      if (validation && is_validation_document(doc.text, options.validation_fraction, options.seed)) {
        validation->add_document(ids);
        ++summary.validation_documents;
        summary.validation_tokens += static_cast<int64_t>(ids.size());
      } else {
        train.add_document(ids);
        ++summary.documents;
        summary.tokens += static_cast<int64_t>(ids.size());
      }
      if (progress) {
        summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        progress(summary);
      }
    }
  }
  SWARMT_CHECK_INPUT(summary.documents > 0, "data prepare: no training documents (", summary.validation_documents,
                     " went to validation, ", summary.skipped_documents, " were empty)");
  train.commit();
  if (validation && summary.validation_documents > 0) {
    validation->commit();
    summary.wrote_validation = true;
  }
  summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return summary;
}

}  // namespace swarmt::data
