#include "swarmt/tokenizer/stop_strings.h"

#include <algorithm>

namespace swarmt::tokenizer {

StopStringFilter::StopStringFilter(std::vector<std::string> stop_strings) : stop_strings_(std::move(stop_strings)) {
  stop_strings_.erase(std::remove(stop_strings_.begin(), stop_strings_.end(), std::string()), stop_strings_.end());
  for (const auto& s : stop_strings_) hold_ = std::max(hold_, s.size() - 1);
}

std::string StopStringFilter::push(const std::string& text) {
  if (stopped_) return "";
  // Only the new text and the held-back tail can hold a stop string that was not there before.
  const size_t search_from = released_ > hold_ ? released_ - hold_ : 0;
  text_ += text;
  size_t cut = std::string::npos;
  for (const auto& s : stop_strings_) cut = std::min(cut, text_.find(s, search_from));
  if (cut != std::string::npos) {
    text_.resize(cut);
    stopped_ = true;
  }
  size_t safe = stopped_ ? text_.size() : (text_.size() > hold_ ? text_.size() - hold_ : 0);
  // Never split a UTF-8 character between two releases (each is sent as a JSON string).
  while (safe > released_ && safe < text_.size() && (static_cast<unsigned char>(text_[safe]) & 0xC0) == 0x80) --safe;
  if (safe <= released_) return "";
  std::string out = text_.substr(released_, safe - released_);
  released_ = safe;
  return out;
}

std::string StopStringFilter::flush() {
  if (stopped_ || released_ >= text_.size()) return "";
  std::string out = text_.substr(released_);
  released_ = text_.size();
  return out;
}

}  // namespace swarmt::tokenizer
