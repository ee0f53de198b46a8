#include "swarmt/data/source_factory.h"

#include <filesystem>

#include "swarmt/core/error.h"
#include "swarmt/data/corpus/token_file_source.h"
#include "swarmt/data/long_context/long_context_dataset_source.h"
#include "swarmt/tokenizer/byte_tokenizer.h"
#include "swarmt/tokenizer/tokenizer_config.h"

namespace fs = std::filesystem;

namespace swarmt::data {

TextTokenizer load_text_tokenizer(const std::string& spec) {
  TextTokenizer t{tokenizer::Tokenizer::from_json(tokenizer::byte_tokenizer_json(), "byte tokenizer"), {}, "", ""};
  std::optional<tokenizer::TokenizerConfig> config;
  if (spec == "byte") {
    t.tokenizer_json = tokenizer::byte_tokenizer_json();
    t.tokenizer_config_json = tokenizer::byte_tokenizer_config_json();
    config = tokenizer::TokenizerConfig::from_json(t.tokenizer_config_json, "byte tokenizer config");
  } else {
    SWARMT_CHECK_INPUT(fs::exists(spec + "/tokenizer.json"), "tokenizer '", spec,
                       "': expected \"byte\" or a directory with tokenizer.json");
    auto files = tokenizer::load_tokenizer_dir(spec);
    t.tokenizer = files.tokenizer;
    config = files.config;
    t.tokenizer_json = read_text_file(spec + "/tokenizer.json");
    if (fs::exists(spec + "/tokenizer_config.json")) t.tokenizer_config_json = read_text_file(spec + "/tokenizer_config.json");
  }
  auto id_of = [&](const std::optional<std::string>& token) -> int64_t {
    if (!token) return -1;
    auto id = t.tokenizer.token_to_id(*token);
    return id ? *id : -1;
  };
  if (config) {
    if (config->add_bos_token) t.ids.bos = id_of(config->bos_token);
    t.ids.eos = id_of(config->eos_token);
    t.ids.pad = id_of(config->pad_token);
  }
  if (t.ids.pad < 0) t.ids.pad = std::max<int64_t>(0, t.ids.eos);
  return t;
}

std::shared_ptr<const DataSource> make_data_source(const JsonView& v, const TextTokenizer& tokenizer,
                                                   int64_t sequence_length, uint64_t seed, int64_t planned_samples,
                                                   int64_t first_planned_sample) {
  const std::string type = v.get_string("type");
  if (type == "tokens") {
    v.reject_unknown_keys({"type", "path", "seed"});
    auto file = std::make_shared<const TokenFile>(TokenFile::open(v.get_string("path")));
    SWARMT_CHECK_INPUT(file->vocab_size() <= tokenizer.tokenizer.vocab_size(), v.describe("path"), ": token file vocabulary (",
                       file->vocab_size(), ") is larger than the model tokenizer's (", tokenizer.tokenizer.vocab_size(), ")");
    // The sidecar's vocab_size is only a claim: an id beyond it would reach the embedding as "index out of
    // range", after the run had started writing. One scan now, naming the file and the offset.
    file->validate_tokens();
    return std::make_shared<TokenFileSource>(file, sequence_length, static_cast<uint64_t>(v.get_int("seed", seed)));
  }
  if (type == "synthetic")
    return std::make_shared<SyntheticSource>(v, tokenizer.tokenizer, tokenizer.ids, sequence_length, seed, planned_samples,
                                             first_planned_sample);
  if (type == "jsonl_qa") return LongContextSource::from_config(v, tokenizer.tokenizer, tokenizer.ids, sequence_length, seed);
  throw_input_error(v.describe("type"), " '", type, "' is not a data source type (tokens, synthetic, jsonl_qa)");
}

}  // namespace swarmt::data
