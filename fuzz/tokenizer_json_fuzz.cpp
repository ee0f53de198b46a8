// Fuzzes tokenizer.json loading and the encode/decode pipeline behind it (Tokenizer::from_json).
//
// Input layout (so that mutations inside the JSON never move the text):
//   byte 0        flags: bit 0 add_special_tokens, bit 1 skip_special_tokens, bit 2 also decode the text's
//                 bytes as raw ids (int16 pairs, so negative and out-of-range ids occur)
//   bytes 1..2    text length L (little endian), clamped to what is left
//   bytes 3..     the tokenizer.json, then the last L bytes: the text to encode
//
// For a tokenizer that loads, the harness checks what Tokenizer promises:
//   * encode(text) of valid UTF-8 gives ids in [0, vocab_size()); of invalid UTF-8, a BadInput error;
//   * decode of those ids (without the post-processor's additions, which may be ids without a token)
//     succeeds, and token_to_id(id_to_token(id)) == id for each of them;
//   * decode of arbitrary ids throws nothing but BadInput;
//   * a byte-level BPE tokenizer without normalizer is lossless, as in Hugging Face: with a ByteLevel
//     pre-tokenizer (add_prefix_space false, only splitting steps beside it), the ByteLevel decoder,
//     the whole byte alphabet in the vocabulary and no subword prefix/suffix, decode(encode(text)) == text
//     whenever no added token was matched (added tokens may strip the whitespace around them).
#include <algorithm>
#include <cstdint>
#include <string>
#include <unordered_set>
#include <vector>

#include "fuzz_harness.h"
#include "swarmt/core/error.h"
#include "swarmt/core/json.h"
#include "swarmt/tokenizer/byte_level.h"
#include "swarmt/tokenizer/tokenizer.h"
#include "swarmt/tokenizer/tokenizer_json.h"
#include "swarmt/tokenizer/utf8.h"

namespace swarmt::fuzz {
namespace {

using tokenizer::Tokenizer;

constexpr size_t kHeaderBytes = 3;

// Runs `action`; a BadInput naming the fuzzed file is a normal outcome, anything else propagates.
template <typename Action>
bool rejected_as_bad_input(Action&& action) {
  try {
    action();
    return false;
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::BadInput) throw;
    if (std::string(e.what()).find(kFuzzSource) == std::string::npos) throw;
    return true;
  }
}

const Json* find_field(const Json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(key);
  return it == object.end() || it->is_null() ? nullptr : &*it;
}

bool is_type(const Json& component, const char* type) {
  const Json* t = find_field(component, "type");
  return t != nullptr && t->is_string() && t->get<std::string>() == type;
}

bool bool_field(const Json& component, const char* key, bool fallback) {
  const Json* v = find_field(component, key);
  return v != nullptr && v->is_boolean() ? v->get<bool>() : fallback;
}

// A pre-tokenizer step that only splits (keeps every byte, in order).
bool only_splits(const Json& step) {
  const Json* behavior = find_field(step, "behavior");
  bool removes = behavior != nullptr && behavior->is_string() &&
                 (behavior->get<std::string>() == "Removed" || behavior->get<std::string>() == "removed");
  if (is_type(step, "Split") || is_type(step, "Punctuation")) return !removes;
  return is_type(step, "Digits");
}

// Exactly one ByteLevel step without a prefix space, every other step a pure split.
bool byte_level_lossless_pre_tokenizer(const Json& pre) {
  std::vector<const Json*> steps;
  if (is_type(pre, "Sequence")) {
    const Json* list = find_field(pre, "pretokenizers");
    if (list == nullptr || !list->is_array()) return false;
    for (const Json& step : *list) steps.push_back(&step);
  } else {
    steps.push_back(&pre);
  }
  int byte_level_steps = 0;
  for (const Json* step : steps) {
    if (is_type(*step, "ByteLevel")) {
      if (bool_field(*step, "add_prefix_space", true)) return false;
      ++byte_level_steps;
    } else if (!only_splits(*step)) {
      return false;
    }
  }
  return byte_level_steps == 1;
}

// Whether this tokenizer promises decode(encode(text)) == text (see the file comment). `root` is the
// document as the loader read it.
bool promises_round_trip(const Json& root, const Tokenizer& tok) {
  if (find_field(root, "normalizer") != nullptr) return false;
  const Json* pre = find_field(root, "pre_tokenizer");
  const Json* decoder = find_field(root, "decoder");
  if (pre == nullptr || decoder == nullptr || !is_type(*decoder, "ByteLevel")) return false;
  if (!byte_level_lossless_pre_tokenizer(*pre)) return false;
  const Json* model = find_field(root, "model");
  if (model == nullptr) return false;
  for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"}) {
    const Json* affix = find_field(*model, key);
    if (affix != nullptr && !(affix->is_string() && affix->get<std::string>().empty())) return false;
  }
  for (const std::string& symbol : tokenizer::byte_level_alphabet()) {
    if (!tok.token_to_id(symbol).has_value()) return false;
  }
  return true;
}

void check_tokenizer(const Tokenizer& tok, const Json& root, const std::string& text, uint8_t flags) {
  const bool add_special_tokens = flags & 1, skip_special_tokens = flags & 2, decode_raw_ids = flags & 4;
  const int64_t vocab_size = tok.vocab_size();  // 0 for an empty vocabulary, which HF accepts too

  if (decode_raw_ids) {
    std::vector<int32_t> raw;
    for (size_t i = 0; i + 1 < text.size(); i += 2)
      raw.push_back(static_cast<int16_t>(static_cast<uint8_t>(text[i]) | (static_cast<uint8_t>(text[i + 1]) << 8)));
    rejected_as_bad_input([&] { tok.decode(raw, skip_special_tokens); });
  }

  if (tokenizer::find_invalid_utf8(text).has_value()) {
    try {
      tok.encode(text, add_special_tokens);
    } catch (const Error& e) {
      FUZZ_REQUIRE(e.kind() == ErrorKind::BadInput, std::string("invalid UTF-8 text is BadInput: ") + e.what());
      return;
    }
    report_finding(__FILE__, __LINE__, "encode accepted text that is not valid UTF-8");
  }

  std::unordered_set<int32_t> added_ids;
  for (const auto& token : tok.added_tokens()) added_ids.insert(token.id);

  const std::vector<int32_t> ids = tok.encode(text, add_special_tokens);
  for (int32_t id : ids)
    FUZZ_REQUIRE(id >= 0 && id < vocab_size, "id " + std::to_string(id) + " outside [0, " + std::to_string(vocab_size) + ")");

  // Without the post-processor every id comes from the model vocabulary or the added tokens, so each
  // one has a token and decoding cannot fail.
  const std::vector<int32_t> plain = add_special_tokens ? tok.encode(text, false) : ids;
  bool matched_added_token = false;
  for (int32_t id : plain) {
    matched_added_token = matched_added_token || added_ids.count(id) > 0;
    const std::string token = tok.id_to_token(id);
    FUZZ_REQUIRE(tok.token_to_id(token) == id, "token_to_id(id_to_token(" + std::to_string(id) + ")) is the id");
  }
  std::string decoded;
  try {
    decoded = tok.decode(plain, skip_special_tokens);
  } catch (const Error& e) {
    report_finding(__FILE__, __LINE__, std::string("decoding ids that encode returned failed: ") + e.what());
  }
  if (!skip_special_tokens && !matched_added_token && promises_round_trip(root, tok)) {
    FUZZ_REQUIRE(decoded == text, "byte-level BPE round trip: got " + json_preview(Json(decoded)) + " for " +
                                      json_preview(Json(text)));
  }
  if (add_special_tokens) rejected_as_bad_input([&] { tok.decode(ids, skip_special_tokens); });
}

// Seed layout: flags, text length, JSON, text.
std::string seed_bytes(uint8_t flags, const std::string& json, const std::string& text) {
  std::string bytes;
  bytes.push_back(static_cast<char>(flags));
  bytes.push_back(static_cast<char>(text.size() & 0xFF));
  bytes.push_back(static_cast<char>((text.size() >> 8) & 0xFF));
  return bytes + json + text;
}

Json bpe_document(const std::vector<std::string>& tokens, const std::vector<std::pair<std::string, std::string>>& merges) {
  Json vocab = Json::object();
  for (size_t i = 0; i < tokens.size(); ++i) vocab[tokens[i]] = i;
  Json merge_list = Json::array();
  for (const auto& [left, right] : merges) merge_list.push_back(Json::array({left, right}));
  Json doc = Json::object();
  doc["version"] = "1.0";
  doc["truncation"] = nullptr;
  doc["padding"] = nullptr;
  doc["added_tokens"] = Json::array();
  doc["model"] = Json::object({{"type", "BPE"}, {"dropout", nullptr}, {"unk_token", nullptr}, {"vocab", vocab},
                               {"merges", merge_list}});
  return doc;
}

Json added_token(int64_t id, const std::string& content, bool special) {
  return Json::object({{"id", id}, {"content", content}, {"single_word", false}, {"lstrip", false},
                       {"rstrip", false}, {"normalized", !special}, {"special", special}});
}

// GPT-2 / Qwen style: the byte alphabet, a few merges, ByteLevel pre-tokenizer and decoder.
Json byte_level_document() {
  std::vector<std::string> tokens(tokenizer::byte_level_alphabet().begin(), tokenizer::byte_level_alphabet().end());
  const std::vector<std::pair<std::string, std::string>> merges = {
      {"\xC4\xA0", "t"}, {"h", "e"}, {"\xC4\xA0t", "he"}, {"i", "n"}, {"\xC4\xA0", "w"}, {"o", "r"},
      {"\xC4\xA0w", "or"}, {"l", "d"}, {"\xC4\xA0wor", "ld"}, {"\xC4\x8A", "\xC4\x8A"},
      {tokenizer::byte_level_alphabet()[0xC3], tokenizer::byte_level_alphabet()[0xA9]}};  // the bytes of U+00E9
  for (const auto& [left, right] : merges) tokens.push_back(left + right);
  Json doc = bpe_document(tokens, merges);
  doc["pre_tokenizer"] = Json::object({{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true},
                                       {"use_regex", true}});
  doc["post_processor"] = Json::object({{"type", "ByteLevel"}, {"add_prefix_space", true}, {"trim_offsets", false},
                                        {"use_regex", true}});
  doc["decoder"] = Json::object({{"type", "ByteLevel"}, {"add_prefix_space", true}, {"trim_offsets", true},
                                 {"use_regex", true}});
  return doc;
}

}  // namespace

void fuzz_one(const uint8_t* data, size_t size) {
  if (size < kHeaderBytes) return;
  const uint8_t flags = data[0];
  const size_t rest = size - kHeaderBytes;
  const size_t text_size = std::min<size_t>(rest, static_cast<size_t>(data[1]) | (static_cast<size_t>(data[2]) << 8));
  const char* body = reinterpret_cast<const char*>(data + kHeaderBytes);
  const std::string json(body, rest - text_size);
  const std::string text(body + rest - text_size, text_size);

  // The same reader the loader uses, so the round-trip check sees the document the tokenizer was built
  // from (duplicate keys and all).
  const tokenizer::TokenizerJsonDocument doc = tokenizer::parse_tokenizer_json(json, kFuzzSource);
  const Tokenizer tok = Tokenizer::from_json(json, kFuzzSource);
  check_tokenizer(tok, doc.root, text, flags);
}

void write_seeds(const SeedWriter& seeds) {
  const std::string mixed_text = "Hello world, the end.\n\nin 2024: caf\xC3\xA9 \xE4\xB8\xAD\xE6\x96\x87 \xF0\x9F\x99\x82 it's  \t ok";

  Json gpt2 = byte_level_document();
  seeds.add("byte_level.bin", seed_bytes(0, gpt2.dump(), mixed_text));
  seeds.add("byte_level_raw_ids.bin", seed_bytes(4, gpt2.dump(), std::string("\x05\x00\x00\x01\xFF\xFF\x10\x01", 8)));

  // Qwen 2.5 / 3: a Split regex before a regex-less ByteLevel, NFC, chat added tokens.
  Json qwen = byte_level_document();
  const int64_t base = static_cast<int64_t>(qwen["model"]["vocab"].size());
  qwen["added_tokens"] = Json::array({added_token(base, "<|endoftext|>", true), added_token(base + 1, "<|im_start|>", true),
                                      added_token(base + 2, "<|im_end|>", true), added_token(base + 3, "<think>", false)});
  qwen["normalizer"] = Json::object({{"type", "NFC"}});
  qwen["pre_tokenizer"] = Json::parse(R"({"type": "Sequence", "pretokenizers": [
      {"type": "Split", "pattern": {"Regex": "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"}, "behavior": "Isolated", "invert": false},
      {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": false, "use_regex": false}]})");
  const std::string chat = "<|im_start|>user\nthe world<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>in\n<|endoftext|>";
  seeds.add("qwen_style.bin", seed_bytes(1, qwen.dump(), chat));
  seeds.add("qwen_style_skip_special.bin", seed_bytes(3, qwen.dump(), chat));
  Json qwen_raw = qwen;
  qwen_raw.erase("normalizer");
  seeds.add("byte_level_added_tokens.bin", seed_bytes(0, qwen_raw.dump(), mixed_text + "<|im_end|>"));

  // Gemma 3 style: SentencePiece BPE with byte fallback, Replace normalizer, <bos> template.
  std::vector<std::string> sp_tokens = {"<pad>", "<eos>", "<bos>", "<unk>"};
  for (int byte = 0; byte < 256; ++byte) {
    char name[8];
    std::snprintf(name, sizeof(name), "<0x%02X>", byte);
    sp_tokens.push_back(name);
  }
  const std::vector<std::pair<std::string, std::string>> sp_merges = {
      {"\xE2\x96\x81", "t"}, {"h", "e"}, {"\xE2\x96\x81t", "he"}, {"\xE2\x96\x81", "\xE2\x96\x81"}};
  for (const char* piece : {"\xE2\x96\x81", "t", "h", "e", "a", "b", "c", "w", "o", "r", "l", "d", "\n"}) sp_tokens.push_back(piece);
  for (const auto& [left, right] : sp_merges) sp_tokens.push_back(left + right);
  Json gemma = bpe_document(sp_tokens, sp_merges);
  gemma["model"]["unk_token"] = "<unk>";
  gemma["model"]["byte_fallback"] = true;
  gemma["model"]["fuse_unk"] = true;
  gemma["added_tokens"] = Json::array({added_token(0, "<pad>", true), added_token(1, "<eos>", true), added_token(2, "<bos>", true),
                                       added_token(3, "<unk>", true), added_token(static_cast<int64_t>(sp_tokens.size()), "<start_of_turn>", true)});
  gemma["normalizer"] = Json::parse(R"({"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"})");
  gemma["post_processor"] = Json::parse(R"({"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<bos>", "type_id": 0}},
      {"Sequence": {"id": "A", "type_id": 0}}], "pair": [], "special_tokens": {"<bos>": {"id": "<bos>", "ids": [2], "tokens": ["<bos>"]}}})");
  gemma["decoder"] = Json::parse(R"({"type": "Sequence", "decoders": [{"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "},
      {"type": "ByteFallback"}, {"type": "Fuse"}, {"type": "Strip", "content": " ", "start": 1, "stop": 0}]})");
  seeds.add("sentencepiece_style.bin", seed_bytes(1, gemma.dump(), "<start_of_turn>the  world\n\xC3\xA9\xF0\x9F\x99\x82 zzz"));

  // Metaspace pre-tokenizer and decoder, merges written as "a b" strings.
  Json meta = gemma;
  meta.erase("normalizer");
  meta["model"]["merges"] = Json::array({"\xE2\x96\x81 t", "h e", "\xE2\x96\x81t he", "\xE2\x96\x81 \xE2\x96\x81"});
  meta["pre_tokenizer"] = Json::parse(R"({"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "first", "split": true})");
  meta["decoder"] = Json::parse(R"({"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "first", "split": true})");
  seeds.add("metaspace.bin", seed_bytes(0, meta.dump(), "the world <bos>the"));

  // Word-level components: normalizer chain, Whitespace / Digits / Punctuation splits, WordPiece-like
  // prefix and suffix, a hole in the ids, Roberta post-processor.
  Json words = Json::parse(R"({"version": "1.0", "added_tokens": [{"id": 40, "content": "[MASK]", "special": true, "lstrip": true, "rstrip": true, "single_word": true}],
    "normalizer": {"type": "Sequence", "normalizers": [{"type": "NFKD"}, {"type": "Lowercase"}, {"type": "Strip", "strip_left": true, "strip_right": true},
      {"type": "Replace", "pattern": {"Regex": "\\s+"}, "content": " "}, {"type": "Prepend", "prepend": "^"}, {"type": "NFKC"}]},
    "pre_tokenizer": {"type": "Sequence", "pretokenizers": [{"type": "WhitespaceSplit"}, {"type": "Punctuation", "behavior": "Isolated"},
      {"type": "Digits", "individual_digits": true}, {"type": "Whitespace"}]},
    "post_processor": {"type": "RobertaProcessing", "sep": ["</s>", 2], "cls": ["<s>", 0], "trim_offsets": true, "add_prefix_space": false},
    "decoder": {"type": "Sequence", "decoders": [{"type": "Replace", "pattern": {"Regex": "##"}, "content": ""}, {"type": "Fuse"}]},
    "model": {"type": "BPE", "unk_token": "[UNK]", "continuing_subword_prefix": "##", "end_of_word_suffix": "</w>", "fuse_unk": false, "ignore_merges": true,
      "vocab": {"<s>": 0, "[UNK]": 1, "</s>": 2, "a": 3, "##b": 4, "##c": 5, "ab": 6, "abc": 7, "^": 8, "1": 9, "##1": 10, ",": 11, "a</w>": 12, "##b</w>": 13, "ab</w>": 14, "^a": 15},
      "merges": ["a ##b", "ab ##c", "a ##b</w>"]}})");
  seeds.add("word_components.bin", seed_bytes(3, words.dump(), "  AB ABC, 11 [MASK] \xEF\xBC\xA1" "b  abx "));

  // A Split pre-tokenizer with a literal pattern and the other behaviours, a BertProcessing wrapper.
  Json split = byte_level_document();
  split["pre_tokenizer"] = Json::parse(R"({"type": "Sequence", "pretokenizers": [{"type": "Split", "pattern": {"String": "\n"}, "behavior": "MergedWithPrevious", "invert": false},
      {"type": "Split", "pattern": {"Regex": "\\d+"}, "behavior": "Contiguous", "invert": true},
      {"type": "ByteLevel", "add_prefix_space": false, "use_regex": false}]})");
  split["post_processor"] = Json::parse(R"({"type": "Sequence", "processors": [{"type": "ByteLevel"}, {"type": "BertProcessing", "cls": ["!", 0], "sep": ["\"", 1]}]})");
  seeds.add("split_behaviours.bin", seed_bytes(1, split.dump(), "line one\nline 22 two\n\n333"));
}

}  // namespace swarmt::fuzz
