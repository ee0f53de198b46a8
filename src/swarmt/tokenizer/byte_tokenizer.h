// The byte tokenizer for synthetic tasks and small from-scratch models: one token per UTF-8 byte.
//
// It is an ordinary Hugging Face tokenizer.json, so the same loader (and HF tokenizers, transformers.js)
// read it, and a model directory trained with it looks like any other:
//   model    BPE, vocab <0x00>..<0xFF> = ids 0..255, no merges, byte_fallback: every character is
//            missing from the vocabulary and falls back to its bytes
//   added    256 <pad>, 257 <bos>, 258 <eos> (special)
//   post     TemplateProcessing: <bos> + text when add_special_tokens
//   decoder  ByteFallback + Fuse
// Any valid UTF-8 text round-trips exactly: decode(encode(text)) == text. (Text that spells a special
// token, e.g. "<eos>", encodes to that token, as with every HF tokenizer.)
#pragma once

#include <cstdint>
#include <string>

namespace swarmt::tokenizer {

inline constexpr int32_t kByteTokenizerPadId = 256;
inline constexpr int32_t kByteTokenizerBosId = 257;
inline constexpr int32_t kByteTokenizerEosId = 258;
inline constexpr int64_t kByteTokenizerVocabSize = 259;

// tokenizer.json text of the byte tokenizer.
std::string byte_tokenizer_json();
// The matching tokenizer_config.json text (special tokens, add_bos_token true, no chat template).
std::string byte_tokenizer_config_json();

}  // namespace swarmt::tokenizer
