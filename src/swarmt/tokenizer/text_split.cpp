#include "swarmt/tokenizer/text_split.h"

#include <algorithm>

#include "swarmt/core/error.h"
#include "swarmt/tokenizer/utf8.h"

namespace swarmt::tokenizer {

TextPattern TextPattern::from_json(const Json& json, const ComponentPath& where) {
  const std::string describe = str_cat(where.source, ": field '", where.path, "'");
  SWARMT_CHECK_INPUT(json.is_object() && json.size() == 1, describe,
                     " must be {\"String\": ...} or {\"Regex\": ...} (got ", json_preview(json), ")");
  auto it = json.begin();
  SWARMT_CHECK_INPUT(it.key() == "String" || it.key() == "Regex", describe,
                     " must be {\"String\": ...} or {\"Regex\": ...} (got key '", it.key(), "')");
  SWARMT_CHECK_INPUT(it.value().is_string(), where.describe(it.key()), " must be a string (got ",
                     json_preview(it.value()), ")");
  const std::string& text = it.value().get_ref<const std::string&>();
  if (it.key() == "String") return literal(text);
  TextPattern pattern;
  pattern.regex_ = std::make_shared<const Regex>(text, where.describe("Regex"));
  return pattern;
}

TextPattern TextPattern::literal(std::string text) {
  TextPattern pattern;
  pattern.literal_ = std::move(text);
  return pattern;
}

void TextPattern::find_all(std::string_view text, std::vector<ByteRange>& out) const {
  if (regex_) {
    regex_->find_all(text, out);
    return;
  }
  if (literal_.empty()) return;
  size_t pos = 0;
  while ((pos = text.find(literal_, pos)) != std::string_view::npos) {
    out.emplace_back(pos, pos + literal_.size());
    pos += literal_.size();
  }
}

std::string TextPattern::replace_all(std::string_view text, std::string_view content) const {
  std::vector<ByteRange> matches;
  find_all(text, matches);
  if (matches.empty()) return std::string(text);
  std::string out;
  out.reserve(text.size() + matches.size() * content.size());
  size_t prev = 0;
  for (const auto& [begin, end] : matches) {
    out.append(text.substr(prev, begin - prev));
    out.append(content);
    prev = end;
  }
  out.append(text.substr(prev));
  return out;
}

SplitBehavior parse_split_behavior(const std::string& name, const std::string& describe) {
  // Older files spell them in lower case ("removed", "merged_with_previous").
  if (name == "Removed" || name == "removed") return SplitBehavior::Removed;
  if (name == "Isolated" || name == "isolated") return SplitBehavior::Isolated;
  if (name == "MergedWithPrevious" || name == "merged_with_previous") return SplitBehavior::MergedWithPrevious;
  if (name == "MergedWithNext" || name == "merged_with_next") return SplitBehavior::MergedWithNext;
  if (name == "Contiguous" || name == "contiguous") return SplitBehavior::Contiguous;
  throw_input_error(describe, " '", name,
                    "' is not supported (supported: Removed, Isolated, MergedWithPrevious, MergedWithNext, "
                    "Contiguous)");
}

std::vector<CoverRange> cover_with_matches(size_t text_size, const std::vector<ByteRange>& matches, bool invert) {
  std::vector<CoverRange> cover;
  if (text_size == 0) {
    cover.push_back({0, 0, invert});
    return cover;
  }
  cover.reserve(matches.size() * 2 + 1);
  size_t prev = 0;
  for (const auto& [begin, end] : matches) {
    if (begin > prev) cover.push_back({prev, begin, invert});
    cover.push_back({begin, end, !invert});
    prev = end;
  }
  if (prev < text_size) cover.push_back({prev, text_size, invert});
  return cover;
}

std::vector<ByteRange> find_code_points(std::string_view text, const std::function<bool(char32_t)>& predicate) {
  std::vector<ByteRange> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t begin = pos;
    char32_t c = next_code_point(text, pos);
    if (predicate(c)) out.emplace_back(begin, pos);
  }
  return out;
}

std::vector<ByteRange> split_by_behavior(const std::vector<CoverRange>& cover, SplitBehavior behavior) {
  // (range, keep) pairs, built as in HF's NormalizedString::split; only Removed drops anything.
  std::vector<ByteRange> pieces;
  pieces.reserve(cover.size());
  bool previous_match = false;
  switch (behavior) {
    case SplitBehavior::Isolated:
      for (const auto& r : cover) pieces.emplace_back(r.begin, r.end);
      break;
    case SplitBehavior::Removed:
      for (const auto& r : cover)
        if (!r.is_match) pieces.emplace_back(r.begin, r.end);
      break;
    case SplitBehavior::Contiguous:
      for (const auto& r : cover) {
        if (r.is_match == previous_match && !pieces.empty()) {
          pieces.back().second = r.end;
        } else {
          pieces.emplace_back(r.begin, r.end);
        }
        previous_match = r.is_match;
      }
      break;
    case SplitBehavior::MergedWithPrevious:
      for (const auto& r : cover) {
        if (r.is_match && !previous_match && !pieces.empty()) {
          pieces.back().second = r.end;
        } else {
          pieces.emplace_back(r.begin, r.end);
        }
        previous_match = r.is_match;
      }
      break;
    case SplitBehavior::MergedWithNext:
      for (auto it = cover.rbegin(); it != cover.rend(); ++it) {
        if (it->is_match && !previous_match && !pieces.empty()) {
          pieces.back().first = it->begin;
        } else {
          pieces.emplace_back(it->begin, it->end);
        }
        previous_match = it->is_match;
      }
      std::reverse(pieces.begin(), pieces.end());
      break;
  }
  std::vector<ByteRange> non_empty;
  non_empty.reserve(pieces.size());
  for (const auto& p : pieces)
    if (p.second > p.first) non_empty.push_back(p);
  return non_empty;
}

}  // namespace swarmt::tokenizer
