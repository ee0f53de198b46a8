#include "swarmt/tokenizer/byte_tokenizer.h"

#include <cstdio>

#include "swarmt/core/json.h"

namespace swarmt::tokenizer {

namespace {

Json special_token(int32_t id, const char* content) {
  Json token = Json::object();
  token["id"] = id;
  token["content"] = content;
  token["single_word"] = false;
  token["lstrip"] = false;
  token["rstrip"] = false;
  token["normalized"] = false;
  token["special"] = true;
  return token;
}

}  // namespace

std::string byte_tokenizer_json() {
  Json vocab = Json::object();
  char name[8];
  for (int byte = 0; byte < 256; ++byte) {
    std::snprintf(name, sizeof(name), "<0x%02X>", byte);
    vocab[name] = byte;
  }
  // Built step by step with explicit arrays: nlohmann's nested brace initialisation is ambiguous for
  // one-element lists.
  auto special_piece = [](const char* id, int type_id) {
    return Json{{"SpecialToken", Json{{"id", id}, {"type_id", type_id}}}};
  };
  auto sequence_piece = [](const char* id, int type_id) {
    return Json{{"Sequence", Json{{"id", id}, {"type_id", type_id}}}};
  };
  Json post_processor = Json::object();
  post_processor["type"] = "TemplateProcessing";
  post_processor["single"] = Json::array({special_piece("<bos>", 0), sequence_piece("A", 0)});
  post_processor["pair"] = Json::array(
      {special_piece("<bos>", 0), sequence_piece("A", 0), special_piece("<bos>", 1), sequence_piece("B", 1)});
  Json bos_entry = Json::object();
  bos_entry["id"] = "<bos>";
  bos_entry["ids"] = Json::array({kByteTokenizerBosId});
  bos_entry["tokens"] = Json::array({"<bos>"});
  post_processor["special_tokens"] = Json::object();
  post_processor["special_tokens"]["<bos>"] = bos_entry;

  Json decoder = Json::object();
  decoder["type"] = "Sequence";
  decoder["decoders"] = Json::array({Json{{"type", "ByteFallback"}}, Json{{"type", "Fuse"}}});

  Json model = Json::object();
  model["type"] = "BPE";
  model["dropout"] = nullptr;
  model["unk_token"] = nullptr;
  model["continuing_subword_prefix"] = nullptr;
  model["end_of_word_suffix"] = nullptr;
  model["fuse_unk"] = false;
  model["byte_fallback"] = true;
  model["ignore_merges"] = false;
  model["vocab"] = vocab;
  model["merges"] = Json::array();

  Json doc = Json::object();
  doc["version"] = "1.0";
  doc["truncation"] = nullptr;
  doc["padding"] = nullptr;
  doc["added_tokens"] =
      Json::array({special_token(kByteTokenizerPadId, "<pad>"), special_token(kByteTokenizerBosId, "<bos>"),
                   special_token(kByteTokenizerEosId, "<eos>")});
  doc["normalizer"] = nullptr;
  doc["pre_tokenizer"] = nullptr;
  doc["post_processor"] = post_processor;
  doc["decoder"] = decoder;
  doc["model"] = model;
  return doc.dump(2);
}

std::string byte_tokenizer_config_json() {
  Json config = {
      {"tokenizer_class", "PreTrainedTokenizerFast"},
      {"bos_token", "<bos>"},
      {"eos_token", "<eos>"},
      {"pad_token", "<pad>"},
      {"unk_token", nullptr},
      {"add_bos_token", true},
      {"add_eos_token", false},
      {"model_max_length", 1000000000},
      {"clean_up_tokenization_spaces", false},
  };
  return config.dump(2);
}

}  // namespace swarmt::tokenizer
