#include "swarmt/tokenizer/post_processor.h"

#include <map>

#include "swarmt/core/error.h"

namespace swarmt::tokenizer {

namespace {

// Ids around the sequence: prefix + ids + suffix.
class WrapPostProcessor : public PostProcessor {
 public:
  WrapPostProcessor(std::vector<int32_t> prefix, std::vector<int32_t> suffix)
      : prefix_(std::move(prefix)), suffix_(std::move(suffix)) {}
  void process(std::vector<int32_t>& ids) const override {
    ids.insert(ids.begin(), prefix_.begin(), prefix_.end());
    ids.insert(ids.end(), suffix_.begin(), suffix_.end());
  }

 private:
  std::vector<int32_t> prefix_, suffix_;
};

class IdentityPostProcessor : public PostProcessor {
 public:
  void process(std::vector<int32_t>&) const override {}
};

class SequencePostProcessor : public PostProcessor {
 public:
  explicit SequencePostProcessor(std::vector<std::unique_ptr<PostProcessor>> steps) : steps_(std::move(steps)) {}
  void process(std::vector<int32_t>& ids) const override {
    for (const auto& step : steps_) step->process(ids);
  }

 private:
  std::vector<std::unique_ptr<PostProcessor>> steps_;
};

int32_t checked_id(const Json& value, const std::string& describe, int64_t vocab_size) {
  SWARMT_CHECK_INPUT(value.is_number_integer() || value.is_number_unsigned(), describe, " must be an integer id (got ",
                     json_preview(value), ")");
  int64_t id = value.get<int64_t>();
  SWARMT_CHECK_INPUT(id >= 0 && id < vocab_size, describe, " = ", id, " is out of range (vocabulary size ", vocab_size,
                     ")");
  return static_cast<int32_t>(id);
}

std::unique_ptr<PostProcessor> make_template(const JsonView& view, const ComponentPath& where, int64_t vocab_size) {
  // special_tokens: {"<bos>": {"id": "<bos>", "ids": [2], "tokens": ["<bos>"]}}
  std::map<std::string, std::vector<int32_t>> specials;
  if (view.has("special_tokens")) {
    JsonView special_view = view.object("special_tokens");
    for (auto it = special_view.json().begin(); it != special_view.json().end(); ++it) {
      std::string describe = where.describe("special_tokens." + it.key() + ".ids");
      JsonView entry = special_view.object(it.key());
      const Json& ids = entry.raw("ids");
      SWARMT_CHECK_INPUT(ids.is_array(), describe, " must be a list of ids (got ", json_preview(ids), ")");
      std::vector<int32_t>& out = specials[it.key()];
      for (size_t i = 0; i < ids.size(); ++i)
        out.push_back(checked_id(ids[i], describe + "[" + std::to_string(i) + "]", vocab_size));
    }
  }
  const Json& single = component_list(view, "single");
  std::vector<int32_t> prefix, suffix;
  bool seen_sequence = false;
  for (size_t i = 0; i < single.size(); ++i) {
    std::string describe = where.describe("single[" + std::to_string(i) + "]");
    const Json& piece = single[i];
    SWARMT_CHECK_INPUT(piece.is_object() && piece.size() == 1, describe,
                       " must be {\"SpecialToken\": {...}} or {\"Sequence\": {...}} (got ", json_preview(piece), ")");
    auto it = piece.begin();
    SWARMT_CHECK_INPUT(it.value().is_object() && it.value().contains("id") && it.value()["id"].is_string(), describe,
                       ".", it.key(), " must be an object with a string \"id\" (got ", json_preview(it.value()), ")");
    std::string name = it.value()["id"].get<std::string>();
    if (it.key() == "Sequence") {
      SWARMT_CHECK_INPUT(name == "A", describe, ": a single-sequence template can only contain sequence \"A\" (got \"",
                         name, "\")");
      SWARMT_CHECK_INPUT(!seen_sequence, describe, ": sequence \"A\" appears twice");
      seen_sequence = true;
    } else if (it.key() == "SpecialToken") {
      auto special = specials.find(name);
      SWARMT_CHECK_INPUT(special != specials.end(), describe, ": special token \"", name,
                         "\" is not defined in special_tokens");
      auto& target = seen_sequence ? suffix : prefix;
      target.insert(target.end(), special->second.begin(), special->second.end());
    } else {
      throw_input_error(describe, " must be {\"SpecialToken\": ...} or {\"Sequence\": ...} (got key '", it.key(), "')");
    }
  }
  SWARMT_CHECK_INPUT(seen_sequence, where.describe("single"), " must contain {\"Sequence\": {\"id\": \"A\"}}");
  return std::make_unique<WrapPostProcessor>(std::move(prefix), std::move(suffix));
}

// cls/sep of RobertaProcessing and BertProcessing: ["<s>", 0].
int32_t pair_id(const JsonView& view, const std::string& key, int64_t vocab_size) {
  const Json& pair = view.raw(key);
  SWARMT_CHECK_INPUT(pair.is_array() && pair.size() == 2 && pair[0].is_string(), view.describe(key),
                     " must be [token, id] (got ", json_preview(pair), ")");
  return checked_id(pair[1], view.describe(key) + "[1]", vocab_size);
}

}  // namespace

std::unique_ptr<PostProcessor> make_post_processor(const Json& json, const ComponentPath& where, int64_t vocab_size) {
  std::string type = component_type(json, where);
  JsonView view = where.view(json);
  if (type == "TemplateProcessing") return make_template(view, where, vocab_size);
  if (type == "ByteLevel") return std::make_unique<IdentityPostProcessor>();
  if (type == "RobertaProcessing" || type == "BertProcessing") {
    return std::make_unique<WrapPostProcessor>(std::vector<int32_t>{pair_id(view, "cls", vocab_size)},
                                               std::vector<int32_t>{pair_id(view, "sep", vocab_size)});
  }
  if (type == "Sequence") {
    const Json& list = component_list(view, "processors");
    std::vector<std::unique_ptr<PostProcessor>> steps;
    for (size_t i = 0; i < list.size(); ++i)
      steps.push_back(make_post_processor(list[i], where.element("processors", i), vocab_size));
    return std::make_unique<SequencePostProcessor>(std::move(steps));
  }
  throw_unsupported_component(where, type,
                              "TemplateProcessing, ByteLevel, RobertaProcessing, BertProcessing, Sequence");
}

}  // namespace swarmt::tokenizer
