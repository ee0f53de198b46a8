// Stop strings over streamed text: text is released as it comes, except the last (longest stop string
// - 1) bytes, which could be the start of a stop string; when a stop string appears, the text before it
// is released and the rest is dropped. So a stop string is never half printed, and never printed.
// Releases end on UTF-8 character boundaries.
#pragma once

#include <string>
#include <vector>

namespace swarmt::tokenizer {

class StopStringFilter {
 public:
  explicit StopStringFilter(std::vector<std::string> stop_strings);

  // Appends `text`; returns what can be released now ("" while it may still be part of a stop string).
  std::string push(const std::string& text);
  // The text still held back (nothing once stopped).
  std::string flush();
  // True once a stop string appeared: the caller stops generating.
  bool stopped() const { return stopped_; }

 private:
  std::vector<std::string> stop_strings_;
  size_t hold_ = 0;      // bytes held back while no stop string appeared
  std::string text_;     // all text so far (cut at the stop string once found)
  size_t released_ = 0;  // bytes of text_ returned already
  bool stopped_ = false;
};

}  // namespace swarmt::tokenizer
