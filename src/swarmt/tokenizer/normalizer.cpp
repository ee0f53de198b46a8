#include "swarmt/tokenizer/normalizer.h"

#include <vector>

#include "swarmt/core/error.h"
#include "swarmt/tokenizer/text_split.h"
#include "swarmt/tokenizer/unicode.h"
#include "swarmt/tokenizer/utf8.h"

namespace swarmt::tokenizer {

namespace {

class UnicodeFormNormalizer : public Normalizer {
 public:
  explicit UnicodeFormNormalizer(NormalizationForm form) : form_(form) {}
  std::string normalize(std::string text) const override { return unicode_normalize(text, form_); }

 private:
  NormalizationForm form_;
};

class LowercaseNormalizer : public Normalizer {
 public:
  std::string normalize(std::string text) const override { return unicode_lowercase(text); }
};

class ReplaceNormalizer : public Normalizer {
 public:
  ReplaceNormalizer(TextPattern pattern, std::string content)
      : pattern_(std::move(pattern)), content_(std::move(content)) {}
  std::string normalize(std::string text) const override { return pattern_.replace_all(text, content_); }

 private:
  TextPattern pattern_;
  std::string content_;
};

class PrependNormalizer : public Normalizer {
 public:
  explicit PrependNormalizer(std::string prefix) : prefix_(std::move(prefix)) {}
  std::string normalize(std::string text) const override { return text.empty() ? text : prefix_ + text; }

 private:
  std::string prefix_;
};

class StripNormalizer : public Normalizer {
 public:
  StripNormalizer(bool left, bool right) : left_(left), right_(right) {}
  std::string normalize(std::string text) const override {
    size_t begin = 0, end = text.size();
    if (left_) {
      while (begin < end) {
        size_t next = begin;
        if (!is_unicode_whitespace(next_code_point(text, next))) break;
        begin = next;
      }
    }
    if (right_) {
      while (end > begin) {
        size_t start = end - 1;
        while (start > begin && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) --start;
        size_t next = start;
        if (!is_unicode_whitespace(next_code_point(text, next))) break;
        end = start;
      }
    }
    return text.substr(begin, end - begin);
  }

 private:
  bool left_, right_;
};

class SequenceNormalizer : public Normalizer {
 public:
  SequenceNormalizer(std::vector<std::unique_ptr<Normalizer>> steps, std::string where)
      : steps_(std::move(steps)), where_(std::move(where)) {}
  std::string normalize(std::string text) const override {
    const size_t original = text.size();
    for (size_t i = 0; i < steps_.size(); ++i) {
      text = steps_[i]->normalize(std::move(text));
      check_chain_growth(where_, "normalizer", i, original, text.size());
    }
    return text;
  }

 private:
  std::vector<std::unique_ptr<Normalizer>> steps_;
  std::string where_;
};

}  // namespace

std::unique_ptr<Normalizer> make_normalizer(const Json& json, const ComponentPath& where) {
  std::string type = component_type(json, where);
  JsonView view = where.view(json);
  if (type == "NFC") return std::make_unique<UnicodeFormNormalizer>(NormalizationForm::NFC);
  if (type == "NFD") return std::make_unique<UnicodeFormNormalizer>(NormalizationForm::NFD);
  if (type == "NFKC") return std::make_unique<UnicodeFormNormalizer>(NormalizationForm::NFKC);
  if (type == "NFKD") return std::make_unique<UnicodeFormNormalizer>(NormalizationForm::NFKD);
  if (type == "Lowercase") return std::make_unique<LowercaseNormalizer>();
  if (type == "Replace") {
    return std::make_unique<ReplaceNormalizer>(TextPattern::from_json(view.raw("pattern"), where.child("pattern")),
                                               view.get_string("content"));
  }
  if (type == "Prepend") return std::make_unique<PrependNormalizer>(view.get_string("prepend"));
  if (type == "Strip") {
    return std::make_unique<StripNormalizer>(view.get_bool("strip_left", true), view.get_bool("strip_right", true));
  }
  if (type == "Sequence") {
    const Json& list = component_list(view, "normalizers");
    std::vector<std::unique_ptr<Normalizer>> steps;
    for (size_t i = 0; i < list.size(); ++i) steps.push_back(make_normalizer(list[i], where.element("normalizers", i)));
    return std::make_unique<SequenceNormalizer>(std::move(steps), where.describe("normalizers"));
  }
  throw_unsupported_component(where, type, "NFC, NFD, NFKC, NFKD, Lowercase, Replace, Prepend, Strip, Sequence");
}

}  // namespace swarmt::tokenizer
