#include "swarmt/tokenizer/added_tokens.h"

#include <algorithm>

#include "swarmt/core/error.h"
#include "swarmt/tokenizer/unicode.h"
#include "swarmt/tokenizer/utf8.h"

namespace swarmt::tokenizer {

namespace {

// The code point that ends just before `pos` (valid UTF-8 assumed).
char32_t code_point_before(std::string_view text, size_t pos) {
  size_t start = pos - 1;
  while (start > 0 && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) --start;
  return next_code_point(text, start);
}

}  // namespace

AddedTokenMatcher::AddedTokenMatcher(const std::vector<AddedToken>& tokens, const std::vector<std::string>& patterns) {
  SWARMT_CHECK(tokens.size() == patterns.size());
  nodes_.emplace_back();  // node 0: the root (its children live in root_children_ for speed)
  for (size_t t = 0; t < tokens.size(); ++t) {
    const std::string& pattern = patterns[t];
    if (pattern.empty()) continue;
    int32_t node = 0;
    for (size_t i = 0; i < pattern.size(); ++i) {
      unsigned char byte = static_cast<unsigned char>(pattern[i]);
      int32_t next = child(node, byte);
      if (next < 0) {
        next = static_cast<int32_t>(nodes_.size());
        nodes_.emplace_back();
        if (node == 0) {
          root_children_[byte] = next;
        } else {
          auto& children = nodes_[node].children;
          auto it = std::lower_bound(children.begin(), children.end(), std::make_pair(byte, int32_t{-1}));
          children.insert(it, {byte, next});
        }
      }
      node = next;
    }
    if (nodes_[node].token < 0) {
      nodes_[node].token = static_cast<int32_t>(tokens_.size());
      tokens_.push_back(tokens[t]);
    }
  }
}

int32_t AddedTokenMatcher::child(int32_t node, unsigned char byte) const {
  if (node == 0) return root_children_[byte];
  const auto& children = nodes_[node].children;
  auto it = std::lower_bound(children.begin(), children.end(), std::make_pair(byte, int32_t{-1}));
  return it != children.end() && it->first == byte ? it->second : -1;
}

int32_t AddedTokenMatcher::longest_match_at(std::string_view text, size_t pos, size_t& end) const {
  int32_t best = -1;
  int32_t node = 0;
  for (size_t i = pos; i < text.size(); ++i) {
    node = child(node, static_cast<unsigned char>(text[i]));
    if (node < 0) break;
    if (nodes_[node].token >= 0) {
      best = nodes_[node].token;
      end = i + 1;
    }
  }
  return best;
}

std::vector<TextSegment> AddedTokenMatcher::split(std::string_view text) const {
  std::vector<TextSegment> segments;
  if (text.empty() || tokens_.empty()) {
    segments.push_back({0, text.size(), -1});
    return segments;
  }
  size_t plain_start = 0;  // start of the plain text not yet emitted
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = 0;
    int32_t index = root_children_[static_cast<unsigned char>(text[pos])] < 0 ? -1 : longest_match_at(text, pos, end);
    if (index < 0) {
      ++pos;
      continue;
    }
    const AddedToken& token = tokens_[index];
    size_t start = pos;
    if (token.single_word) {
      bool word_before = start > 0 && is_unicode_word_char(code_point_before(text, start));
      size_t after = end;
      bool word_after = end < text.size() && is_unicode_word_char(next_code_point(text, after));
      if (word_before || word_after) {
        pos = end;  // HF's automaton still consumed these bytes: no other match may start inside
        continue;
      }
    }
    if (token.lstrip) {
      while (start > plain_start && is_unicode_whitespace(code_point_before(text, start))) {
        size_t prev = start - 1;
        while (prev > 0 && (static_cast<unsigned char>(text[prev]) & 0xC0) == 0x80) --prev;
        start = prev;
      }
    }
    if (token.rstrip) {
      while (end < text.size()) {
        size_t next = end;
        if (!is_unicode_whitespace(next_code_point(text, next))) break;
        end = next;
      }
    }
    if (start > plain_start) segments.push_back({plain_start, start, -1});
    segments.push_back({start, end, token.id});
    plain_start = end;
    pos = end;
  }
  if (plain_start < text.size()) segments.push_back({plain_start, text.size(), -1});
  return segments;
}

}  // namespace swarmt::tokenizer
