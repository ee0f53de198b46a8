#include "swarmt/tokenizer/stream_decoder.h"

#include "swarmt/tokenizer/utf8.h"

namespace swarmt::tokenizer {

namespace {

bool ends_with_replacement(const std::string& text) {
  return text.size() >= kReplacementChar.size() &&
         text.compare(text.size() - kReplacementChar.size(), kReplacementChar.size(), kReplacementChar) == 0;
}

}  // namespace

StreamDecoder::StreamDecoder(Tokenizer tokenizer, bool skip_special_tokens)
    : tokenizer_(std::move(tokenizer)), skip_special_tokens_(skip_special_tokens) {}

std::string StreamDecoder::pending_text() const {
  std::vector<int32_t> window = context_;
  window.insert(window.end(), pending_.begin(), pending_.end());
  std::string text = tokenizer_.decode(window, skip_special_tokens_);
  if (text.compare(0, context_text_.size(), context_text_) == 0) return text.substr(context_text_.size());
  return tokenizer_.decode(pending_, skip_special_tokens_);
}

std::string StreamDecoder::push(int32_t id) {
  pending_.push_back(id);
  std::string fresh = pending_text();
  // Wait while a character is incomplete, or while the new ids produced nothing (skipped specials).
  if (fresh.empty() || ends_with_replacement(fresh)) return std::string();
  context_.swap(pending_);
  pending_.clear();
  context_text_ = tokenizer_.decode(context_, skip_special_tokens_);
  return fresh;
}

std::string StreamDecoder::flush() {
  std::string rest = pending_.empty() ? std::string() : pending_text();
  reset();
  return rest;
}

void StreamDecoder::reset() {
  context_.clear();
  pending_.clear();
  context_text_.clear();
}

}  // namespace swarmt::tokenizer
