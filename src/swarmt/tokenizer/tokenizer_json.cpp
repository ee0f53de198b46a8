#include "swarmt/tokenizer/tokenizer_json.h"

#include "swarmt/core/error.h"

namespace swarmt::tokenizer {

namespace {

// SAX handler: builds a DOM like nlohmann's own, except for the two large collections it streams.
class TokenizerJsonHandler : public nlohmann::json_sax<Json> {
 public:
  TokenizerJsonHandler(TokenizerJsonDocument& doc, const std::string& source) : doc_(doc), source_(source) {}

  const std::string& error() const { return error_; }

  bool null() override { return value(Json(nullptr)); }
  bool boolean(bool v) override { return value(Json(v)); }
  bool number_integer(number_integer_t v) override { return integer(v, Json(v)); }
  bool number_unsigned(number_unsigned_t v) override {
    return integer(v > static_cast<number_unsigned_t>(INT64_MAX) ? -1 : static_cast<int64_t>(v), Json(v));
  }
  bool number_float(number_float_t v, const string_t&) override { return value(Json(v)); }
  bool binary(binary_t&) override { return fail("unexpected binary value"); }

  bool string(string_t& s) override {
    if (mode_ == Mode::Merges) return merge_string(s);
    return value(Json(std::move(s)));
  }

  bool key(string_t& k) override {
    if (mode_ == Mode::Vocab) {
      vocab_token_ = std::move(k);
      return true;
    }
    pending_key_ = std::move(k);
    return true;
  }

  bool start_object(std::size_t) override {
    if (mode_ == Mode::Dom && stack_.size() == 2 && in_model_object() && pending_key_ == "vocab") {
      mode_ = Mode::Vocab;
      doc_.vocab_streamed = true;
      return true;
    }
    if (mode_ == Mode::Vocab) return fail_vocab_value("an object");
    if (mode_ == Mode::Merges) return fail_merge("an object");
    return open(Json::object());
  }

  bool end_object() override {
    if (mode_ == Mode::Vocab) {
      mode_ = Mode::Dom;
      return true;
    }
    stack_.pop_back();
    return true;
  }

  bool start_array(std::size_t) override {
    if (mode_ == Mode::Dom && stack_.size() == 2 && in_model_object() && pending_key_ == "merges") {
      mode_ = Mode::Merges;
      merge_depth_ = 0;
      doc_.merges_streamed = true;
      return true;
    }
    if (mode_ == Mode::Vocab) return fail_vocab_value("a list");
    if (mode_ == Mode::Merges) {
      if (merge_depth_ != 0) return fail_merge("a nested list");
      merge_depth_ = 1;
      merge_parts_.clear();
      return true;
    }
    return open(Json::array());
  }

  bool end_array() override {
    if (mode_ == Mode::Merges) {
      if (merge_depth_ == 0) {  // the merges list itself ends
        mode_ = Mode::Dom;
        return true;
      }
      merge_depth_ = 0;
      if (merge_parts_.size() != 2) return fail_merge(std::to_string(merge_parts_.size()) + " strings");
      doc_.merges.emplace_back(std::move(merge_parts_[0]), std::move(merge_parts_[1]));
      return true;
    }
    stack_.pop_back();
    return true;
  }

  bool parse_error(std::size_t, const std::string&, const Json::exception& e) override {
    std::string msg = e.what();
    auto pos = msg.find("] ");
    if (pos != std::string::npos) msg = msg.substr(pos + 2);
    error_ = str_cat(source_, ": not valid JSON: ", msg);
    return false;
  }

 private:
  enum class Mode { Dom, Vocab, Merges };

  bool in_model_object() const {
    return model_object_ != nullptr && model_object_->is_object() && stack_.back() == model_object_;
  }

  bool fail(const std::string& message) {
    if (error_.empty()) error_ = str_cat(source_, ": ", message);
    return false;
  }
  bool fail_vocab_value(const std::string& got) {
    return fail(str_cat("model.vocab: the id of token ", json_preview(Json(vocab_token_)),
                        " must be a non-negative integer (got ", got, ")"));
  }
  bool fail_merge(const std::string& got) {
    return fail(str_cat("model.merges[", doc_.merges.size(),
                        "] must be a pair of tokens [\"left\", \"right\"] or a string \"left right\" (got ", got, ")"));
  }

  bool integer(int64_t v, Json json) {
    if (mode_ == Mode::Vocab) {
      if (v < 0) return fail_vocab_value(json.dump());
      doc_.vocab.emplace_back(std::move(vocab_token_), v);
      return true;
    }
    return value(std::move(json));
  }

  // A legacy merge "left right": exactly one space (tokens of such files never contain one).
  bool merge_string(string_t& s) {
    if (merge_depth_ == 1) {
      merge_parts_.push_back(std::move(s));
      return true;
    }
    if (s.rfind("#version", 0) == 0) return true;  // a merges.txt header pasted into the list
    size_t space = s.find(' ');
    if (space == std::string::npos || s.find(' ', space + 1) != std::string::npos || space == 0 ||
        space + 1 == s.size()) {
      return fail_merge(json_preview(Json(s)));
    }
    doc_.merges.emplace_back(s.substr(0, space), s.substr(space + 1));
    return true;
  }

  // Places a scalar in the DOM (or rejects it inside a streamed collection).
  bool value(Json v) {
    if (mode_ == Mode::Vocab) return fail_vocab_value(json_preview(v));
    if (mode_ == Mode::Merges) return fail_merge(json_preview(v));
    insert(std::move(v));
    return true;
  }

  bool open(Json container) {
    Json* slot = insert(std::move(container));
    if (stack_.size() == 1 && stack_[0]->is_object() && pending_key_ == "model") model_object_ = slot;
    stack_.push_back(slot);
    return true;
  }

  // Pointers on stack_ stay valid: a container only grows while it is the innermost open one.
  Json* insert(Json v) {
    if (stack_.empty()) {
      doc_.root = std::move(v);
      return &doc_.root;
    }
    Json& parent = *stack_.back();
    if (parent.is_object()) {
      Json& slot = parent[pending_key_];
      slot = std::move(v);
      return &slot;
    }
    parent.push_back(std::move(v));
    return &parent.back();
  }

  TokenizerJsonDocument& doc_;
  const std::string& source_;
  std::string error_;
  std::vector<Json*> stack_;
  Json* model_object_ = nullptr;
  std::string pending_key_;
  Mode mode_ = Mode::Dom;
  std::string vocab_token_;
  int merge_depth_ = 0;
  std::vector<std::string> merge_parts_;
};

}  // namespace

TokenizerJsonDocument parse_tokenizer_json(const std::string& text, const std::string& source) {
  TokenizerJsonDocument doc;
  TokenizerJsonHandler handler(doc, source);
  bool ok = Json::sax_parse(text, &handler);
  if (!ok) {
    SWARMT_CHECK(!handler.error().empty(), "JSON parse failed without a message");
    throw_input_error(handler.error());
  }
  SWARMT_CHECK_INPUT(doc.root.is_object(), source, ": the document must be a JSON object (got ", json_preview(doc.root),
                     ")");
  return doc;
}

}  // namespace swarmt::tokenizer
