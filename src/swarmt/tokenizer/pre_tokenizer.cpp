#include "swarmt/tokenizer/pre_tokenizer.h"

#include <functional>

#include "swarmt/core/error.h"
#include "swarmt/tokenizer/byte_level.h"
#include "swarmt/tokenizer/text_split.h"
#include "swarmt/tokenizer/unicode.h"
#include "swarmt/tokenizer/utf8.h"

namespace swarmt::tokenizer {

namespace {

// Replaces every piece by the sub-pieces `ranges_of(piece.text)` returns (byte ranges into it).
void split_pieces(std::vector<PreToken>& pieces,
                  const std::function<std::vector<ByteRange>(const std::string&)>& ranges_of) {
  std::vector<PreToken> out;
  out.reserve(pieces.size());
  for (const PreToken& piece : pieces) {
    for (const auto& [begin, end] : ranges_of(piece.text)) {
      out.push_back({piece.text.substr(begin, end - begin), piece.at_text_start && begin == 0});
    }
  }
  pieces.swap(out);
}

class SplitPreTokenizer : public PreTokenizer {
 public:
  SplitPreTokenizer(TextPattern pattern, SplitBehavior behavior, bool invert)
      : pattern_(std::move(pattern)), behavior_(behavior), invert_(invert) {}
  void pre_tokenize(std::vector<PreToken>& pieces) const override {
    split_pieces(pieces, [&](const std::string& text) {
      std::vector<ByteRange> matches;
      pattern_.find_all(text, matches);
      return split_by_behavior(cover_with_matches(text.size(), matches, invert_), behavior_);
    });
  }

 private:
  TextPattern pattern_;
  SplitBehavior behavior_;
  bool invert_;
};

// Splits on single code points that satisfy a predicate (Digits, Punctuation, WhitespaceSplit).
class CodePointSplitPreTokenizer : public PreTokenizer {
 public:
  CodePointSplitPreTokenizer(std::function<bool(char32_t)> predicate, SplitBehavior behavior)
      : predicate_(std::move(predicate)), behavior_(behavior) {}
  void pre_tokenize(std::vector<PreToken>& pieces) const override {
    split_pieces(pieces, [&](const std::string& text) {
      return split_by_behavior(cover_with_matches(text.size(), find_code_points(text, predicate_), false), behavior_);
    });
  }

 private:
  std::function<bool(char32_t)> predicate_;
  SplitBehavior behavior_;
};

class ByteLevelPreTokenizer : public PreTokenizer {
 public:
  ByteLevelPreTokenizer(bool add_prefix_space, bool use_regex, const std::string& what)
      : add_prefix_space_(add_prefix_space) {
    if (use_regex) regex_ = std::make_shared<const Regex>(kByteLevelSplitPattern, what);
  }
  void pre_tokenize(std::vector<PreToken>& pieces) const override {
    std::vector<PreToken> out;
    out.reserve(pieces.size());
    std::vector<ByteRange> matches;
    for (PreToken& piece : pieces) {
      if (add_prefix_space_ && (piece.text.empty() || piece.text[0] != ' ')) piece.text.insert(0, 1, ' ');
      if (!regex_) {
        if (!piece.text.empty()) out.push_back({byte_level_encode(piece.text), piece.at_text_start});
        continue;
      }
      matches.clear();
      regex_->find_all(piece.text, matches);
      auto ranges = split_by_behavior(cover_with_matches(piece.text.size(), matches, false), SplitBehavior::Isolated);
      for (const auto& [begin, end] : ranges) {
        std::string_view sub(piece.text.data() + begin, end - begin);
        out.push_back({byte_level_encode(sub), piece.at_text_start && begin == 0});
      }
    }
    pieces.swap(out);
  }

 private:
  bool add_prefix_space_;
  std::shared_ptr<const Regex> regex_;
};

class MetaspacePreTokenizer : public PreTokenizer {
 public:
  MetaspacePreTokenizer(std::string replacement, PrependScheme scheme, bool split)
      : replacement_(std::move(replacement)), scheme_(scheme), split_(split) {}
  void pre_tokenize(std::vector<PreToken>& pieces) const override {
    std::vector<PreToken> out;
    out.reserve(pieces.size());
    TextPattern space = TextPattern::literal(" ");
    for (PreToken& piece : pieces) {
      std::string text = space.replace_all(piece.text, replacement_);
      bool starts_with_replacement = text.compare(0, replacement_.size(), replacement_) == 0;
      bool prepend = scheme_ == PrependScheme::Always || (scheme_ == PrependScheme::First && piece.at_text_start);
      if (prepend && !starts_with_replacement) text.insert(0, replacement_);
      if (!split_) {
        if (!text.empty()) out.push_back({std::move(text), piece.at_text_start});
        continue;
      }
      std::vector<ByteRange> matches;
      TextPattern::literal(replacement_).find_all(text, matches);
      for (const auto& [begin, end] :
           split_by_behavior(cover_with_matches(text.size(), matches, false), SplitBehavior::MergedWithNext)) {
        out.push_back({text.substr(begin, end - begin), piece.at_text_start && begin == 0});
      }
    }
    pieces.swap(out);
  }

 private:
  std::string replacement_;
  PrependScheme scheme_;
  bool split_;
};

class SequencePreTokenizer : public PreTokenizer {
 public:
  explicit SequencePreTokenizer(std::vector<std::unique_ptr<PreTokenizer>> steps) : steps_(std::move(steps)) {}
  void pre_tokenize(std::vector<PreToken>& pieces) const override {
    for (const auto& step : steps_) step->pre_tokenize(pieces);
  }

 private:
  std::vector<std::unique_ptr<PreTokenizer>> steps_;
};

// \w+|[^\w\s]+ with the gaps (whitespace) removed: HF's Whitespace pre-tokenizer.
class WhitespacePreTokenizer : public PreTokenizer {
 public:
  explicit WhitespacePreTokenizer(const std::string& what) : regex_(R"(\w+|[^\w\s]+)", what) {}
  void pre_tokenize(std::vector<PreToken>& pieces) const override {
    split_pieces(pieces, [&](const std::string& text) {
      std::vector<ByteRange> matches;
      regex_.find_all(text, matches);
      return split_by_behavior(cover_with_matches(text.size(), matches, /*invert=*/true), SplitBehavior::Removed);
    });
  }

 private:
  Regex regex_;
};

}  // namespace

std::unique_ptr<PreTokenizer> make_pre_tokenizer(const Json& json, const ComponentPath& where) {
  std::string type = component_type(json, where);
  JsonView view = where.view(json);
  if (type == "Split") {
    return std::make_unique<SplitPreTokenizer>(
        TextPattern::from_json(view.raw("pattern"), where.child("pattern")),
        parse_split_behavior(view.get_string("behavior"), where.describe("behavior")), view.get_bool("invert", false));
  }
  if (type == "ByteLevel") {
    return std::make_unique<ByteLevelPreTokenizer>(view.get_bool("add_prefix_space", true),
                                                   view.get_bool("use_regex", true), where.describe("type"));
  }
  if (type == "Digits") {
    SplitBehavior behavior =
        view.get_bool("individual_digits", false) ? SplitBehavior::Isolated : SplitBehavior::Contiguous;
    return std::make_unique<CodePointSplitPreTokenizer>(is_unicode_numeric, behavior);
  }
  if (type == "Punctuation") {
    SplitBehavior behavior = view.has("behavior")
                                 ? parse_split_behavior(view.get_string("behavior"), where.describe("behavior"))
                                 : SplitBehavior::Isolated;
    return std::make_unique<CodePointSplitPreTokenizer>(is_unicode_punctuation, behavior);
  }
  if (type == "WhitespaceSplit") {
    return std::make_unique<CodePointSplitPreTokenizer>(is_unicode_whitespace, SplitBehavior::Removed);
  }
  if (type == "Whitespace") return std::make_unique<WhitespacePreTokenizer>(where.describe("type"));
  if (type == "Metaspace") {
    MetaspaceOptions options = read_metaspace_options(view);
    return std::make_unique<MetaspacePreTokenizer>(options.replacement, options.prepend_scheme, options.split);
  }
  if (type == "Sequence") {
    const Json& list = component_list(view, "pretokenizers");
    std::vector<std::unique_ptr<PreTokenizer>> steps;
    for (size_t i = 0; i < list.size(); ++i)
      steps.push_back(make_pre_tokenizer(list[i], where.element("pretokenizers", i)));
    return std::make_unique<SequencePreTokenizer>(std::move(steps));
  }
  throw_unsupported_component(
      where, type, "Split, ByteLevel, Digits, Metaspace, Whitespace, WhitespaceSplit, Punctuation, Sequence");
}

}  // namespace swarmt::tokenizer
