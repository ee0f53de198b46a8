// Token <-> id tables of a BPE model (tokenizer.json "model.vocab"), built once and then read-only.
//
// Ids may have holes (an id no token uses); size() is max id + 1. The token strings are stored once,
// indexed by id, and the reverse index points into them (no second copy of 262k Gemma tokens).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace swarmt::tokenizer {

// Largest id a tokenizer may use. Real vocabularies stay below ~10^6; the bound keeps a corrupt file
// from making us allocate gigabytes.
inline constexpr int64_t kMaxTokenId = (int64_t{1} << 24) - 1;

class Vocabulary {
 public:
  Vocabulary() = default;
  // Takes (token, id) entries. `describe` names the JSON field for errors: ids outside [0, kMaxTokenId],
  // an id given to two tokens, or a token listed twice are BadInput.
  Vocabulary(std::vector<std::pair<std::string, int64_t>> entries, const std::string& describe);

  // Not copyable (the index points into the token storage); movable.
  Vocabulary(const Vocabulary&) = delete;
  Vocabulary& operator=(const Vocabulary&) = delete;
  Vocabulary(Vocabulary&&) = default;
  Vocabulary& operator=(Vocabulary&&) = default;

  std::optional<int32_t> find(std::string_view token) const;
  // The token of `id`, or nullptr for an id outside the table or a hole.
  const std::string* token(int64_t id) const {
    if (id < 0 || id >= static_cast<int64_t>(tokens_.size()) || !present_[id]) return nullptr;
    return &tokens_[id];
  }
  int64_t size() const { return static_cast<int64_t>(tokens_.size()); }  // max id + 1
  size_t count() const { return count_; }                                // number of tokens

 private:
  // Open-addressing index token -> id (linear probing, load <= 1/2). Each slot keeps the id and the
  // low hash bits, so most probes are rejected without touching the token string. A node-based
  // std::unordered_map made loading Gemma's merges (three lookups each) twice as slow.
  struct Slot {
    int32_t id = -1;
    uint32_t hash = 0;
  };
  int32_t insert_or_find(std::string_view token, int32_t id);

  std::vector<std::string> tokens_;
  std::vector<bool> present_;
  std::vector<Slot> slots_;
  size_t mask_ = 0;
  size_t count_ = 0;
};

}  // namespace swarmt::tokenizer
