#include "swarmt/tokenizer/vocabulary.h"

#include <functional>

#include "swarmt/core/error.h"
#include "swarmt/core/json.h"

namespace swarmt::tokenizer {

Vocabulary::Vocabulary(std::vector<std::pair<std::string, int64_t>> entries, const std::string& describe) {
  int64_t max_id = -1;
  for (const auto& [token, id] : entries) {
    SWARMT_CHECK_INPUT(id >= 0 && id <= kMaxTokenId, describe, ": token ", json_preview(Json(token)), " has id ", id,
                       ", outside [0, ", kMaxTokenId, "]");
    max_id = std::max(max_id, id);
  }
  tokens_.resize(static_cast<size_t>(max_id + 1));
  present_.assign(static_cast<size_t>(max_id + 1), false);
  for (auto& [token, id] : entries) {
    SWARMT_CHECK_INPUT(!present_[id], describe, ": id ", id, " is given to two tokens, ",
                       json_preview(Json(tokens_[id])), " and ", json_preview(Json(token)));
    present_[id] = true;
    tokens_[id] = std::move(token);
  }
  size_t capacity = 16;
  while (capacity < entries.size() * 2) capacity <<= 1;
  slots_.resize(capacity);
  mask_ = capacity - 1;
  for (size_t id = 0; id < tokens_.size(); ++id) {
    if (!present_[id]) continue;
    int32_t existing = insert_or_find(tokens_[id], static_cast<int32_t>(id));
    SWARMT_CHECK_INPUT(existing < 0, describe, ": token ", json_preview(Json(tokens_[id])), " is listed twice (ids ",
                       existing, " and ", id, ")");
    ++count_;
  }
}

int32_t Vocabulary::insert_or_find(std::string_view token, int32_t id) {
  size_t hash = std::hash<std::string_view>()(token);
  for (size_t i = hash & mask_;; i = (i + 1) & mask_) {
    Slot& slot = slots_[i];
    if (slot.id < 0) {
      slot = {id, static_cast<uint32_t>(hash)};
      return -1;
    }
    if (slot.hash == static_cast<uint32_t>(hash) && tokens_[slot.id] == token) return slot.id;
  }
}

std::optional<int32_t> Vocabulary::find(std::string_view token) const {
  if (slots_.empty()) return std::nullopt;
  size_t hash = std::hash<std::string_view>()(token);
  for (size_t i = hash & mask_;; i = (i + 1) & mask_) {
    const Slot& slot = slots_[i];
    if (slot.id < 0) return std::nullopt;
    if (slot.hash == static_cast<uint32_t>(hash) && tokens_[slot.id] == token) return slot.id;
  }
}

}  // namespace swarmt::tokenizer
