// GPT-2's byte-level alphabet, used by ByteLevel pre-tokenizers and decoders.
//
// Byte-level BPE works on bytes, but its vocabulary is stored as text. GPT-2's `bytes_to_unicode`
// gives every byte a printable code point: the bytes '!'..'~', 0xA1..0xAC and 0xAE..0xFF stand for
// themselves; the other 68 bytes (controls, space, 0x7F..0xA0, 0xAD) become U+0100 + n in byte order.
// So ' ' -> 'Ġ' (U+0120) and '\n' -> 'Ċ' (U+010A).
#pragma once

#include <array>
#include <string>
#include <string_view>

namespace swarmt::tokenizer {

// The pre-tokenizer regex of HF's ByteLevel(use_regex=true) (GPT-2's pattern plus a final \s+).
inline constexpr const char* kByteLevelSplitPattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

// UTF-8 of the code point that stands for each byte.
const std::array<std::string, 256>& byte_level_alphabet();

// Maps every byte of `bytes` to its code point (the result is valid UTF-8).
std::string byte_level_encode(std::string_view bytes);

// Inverse mapping for one token: appends the bytes its code points stand for. Returns false (and
// appends nothing) if some code point is outside the alphabet; HF then keeps the token's raw bytes.
bool byte_level_decode_token(std::string_view token, std::string& bytes);

}  // namespace swarmt::tokenizer
