#include "swarmt/tokenizer/decoder.h"

#include "swarmt/core/error.h"
#include "swarmt/tokenizer/byte_level.h"
#include "swarmt/tokenizer/text_split.h"
#include "swarmt/tokenizer/utf8.h"

namespace swarmt::tokenizer {

namespace {

class ByteLevelDecoder : public Decoder {
 public:
  void decode_chain(std::vector<std::string>& tokens) const override {
    std::string bytes;
    for (const std::string& token : tokens) {
      // A token outside the alphabet (e.g. an added token containing a space) keeps its raw bytes.
      if (!byte_level_decode_token(token, bytes)) bytes += token;
    }
    tokens.assign(1, utf8_lossy(bytes));
  }
};

// The byte of a "<0xXX>" token (two hex digits), or -1.
int byte_fallback_value(const std::string& token) {
  if (token.size() != 6 || token.compare(0, 3, "<0x") != 0 || token[5] != '>') return -1;
  auto hex = [](char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  int hi = hex(token[3]), lo = hex(token[4]);
  return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

class ByteFallbackDecoder : public Decoder {
 public:
  void decode_chain(std::vector<std::string>& tokens) const override {
    std::vector<std::string> out;
    out.reserve(tokens.size());
    std::string pending;  // bytes of the current run of <0xXX> tokens
    auto flush = [&]() {
      if (pending.empty()) return;
      if (!find_invalid_utf8(pending)) {
        out.push_back(pending);
      } else {
        for (size_t i = 0; i < pending.size(); ++i) out.emplace_back(kReplacementChar);
      }
      pending.clear();
    };
    for (std::string& token : tokens) {
      int byte = byte_fallback_value(token);
      if (byte >= 0) {
        pending.push_back(static_cast<char>(byte));
      } else {
        flush();
        out.push_back(std::move(token));
      }
    }
    flush();
    tokens.swap(out);
  }
};

class FuseDecoder : public Decoder {
 public:
  void decode_chain(std::vector<std::string>& tokens) const override {
    std::string joined;
    for (const auto& token : tokens) joined += token;
    tokens.assign(1, std::move(joined));
  }
};

class ReplaceDecoder : public Decoder {
 public:
  ReplaceDecoder(TextPattern pattern, std::string content)
      : pattern_(std::move(pattern)), content_(std::move(content)) {}
  void decode_chain(std::vector<std::string>& tokens) const override {
    for (auto& token : tokens) token = pattern_.replace_all(token, content_);
  }

 private:
  TextPattern pattern_;
  std::string content_;
};

class StripDecoder : public Decoder {
 public:
  StripDecoder(std::string content, size_t start, size_t stop)
      : content_(std::move(content)), start_(start), stop_(stop) {}
  void decode_chain(std::vector<std::string>& tokens) const override {
    for (auto& token : tokens) {
      size_t begin = 0, end = token.size();
      for (size_t i = 0; i < start_ && begin < end && token.compare(begin, content_.size(), content_) == 0; ++i)
        begin += content_.size();
      for (size_t i = 0; i < stop_ && end >= begin + content_.size() &&
                         token.compare(end - content_.size(), content_.size(), content_) == 0;
           ++i)
        end -= content_.size();
      token = token.substr(begin, end - begin);
    }
  }

 private:
  std::string content_;  // one code point
  size_t start_, stop_;
};

class MetaspaceDecoder : public Decoder {
 public:
  explicit MetaspaceDecoder(MetaspaceOptions options) : options_(std::move(options)) {}
  void decode_chain(std::vector<std::string>& tokens) const override {
    TextPattern replacement = TextPattern::literal(options_.replacement);
    for (size_t i = 0; i < tokens.size(); ++i) {
      // HF drops every replacement char of the first token (not only a leading one) when it prepends.
      bool drop = i == 0 && options_.prepend_scheme != PrependScheme::Never;
      tokens[i] = replacement.replace_all(tokens[i], drop ? "" : " ");
    }
  }

 private:
  MetaspaceOptions options_;
};

class SequenceDecoder : public Decoder {
 public:
  SequenceDecoder(std::vector<std::unique_ptr<Decoder>> steps, std::string where)
      : steps_(std::move(steps)), where_(std::move(where)) {}
  void decode_chain(std::vector<std::string>& tokens) const override {
    const size_t original = total_size(tokens);
    for (size_t i = 0; i < steps_.size(); ++i) {
      steps_[i]->decode_chain(tokens);
      check_chain_growth(where_, "decoder", i, original, total_size(tokens));
    }
  }

 private:
  static size_t total_size(const std::vector<std::string>& tokens) {
    size_t n = 0;
    for (const auto& t : tokens) n += t.size();
    return n;
  }
  std::vector<std::unique_ptr<Decoder>> steps_;
  std::string where_;
};

}  // namespace

std::unique_ptr<Decoder> make_decoder(const Json& json, const ComponentPath& where) {
  std::string type = component_type(json, where);
  JsonView view = where.view(json);
  if (type == "ByteLevel") return std::make_unique<ByteLevelDecoder>();
  if (type == "ByteFallback") return std::make_unique<ByteFallbackDecoder>();
  if (type == "Fuse") return std::make_unique<FuseDecoder>();
  if (type == "Replace") {
    return std::make_unique<ReplaceDecoder>(TextPattern::from_json(view.raw("pattern"), where.child("pattern")),
                                            view.get_string("content"));
  }
  if (type == "Strip") {
    std::string content = view.get_string("content");
    SWARMT_CHECK_INPUT(count_code_points(content) == 1, view.describe("content"),
                       " must be exactly one character (got ", json_preview(Json(content)), ")");
    return std::make_unique<StripDecoder>(content, static_cast<size_t>(view.get_int_in("start", 0, 0, 1 << 20)),
                                          static_cast<size_t>(view.get_int_in("stop", 0, 0, 1 << 20)));
  }
  if (type == "Metaspace") return std::make_unique<MetaspaceDecoder>(read_metaspace_options(view));
  if (type == "Sequence") {
    const Json& list = component_list(view, "decoders");
    std::vector<std::unique_ptr<Decoder>> steps;
    for (size_t i = 0; i < list.size(); ++i) steps.push_back(make_decoder(list[i], where.element("decoders", i)));
    return std::make_unique<SequenceDecoder>(std::move(steps), where.describe("decoders"));
  }
  throw_unsupported_component(where, type, "ByteLevel, ByteFallback, Fuse, Replace, Strip, Metaspace, Sequence");
}

}  // namespace swarmt::tokenizer
