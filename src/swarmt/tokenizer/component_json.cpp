#include "swarmt/tokenizer/component_json.h"

#include "swarmt/core/error.h"
#include "swarmt/tokenizer/utf8.h"

namespace swarmt::tokenizer {

JsonView ComponentPath::view(const Json& json) const { return JsonView(json, source, path + "."); }

std::string ComponentPath::describe(const std::string& key) const {
  return str_cat(source, ": field '", path, ".", key, "'");
}

std::string component_type(const Json& json, const ComponentPath& where) {
  SWARMT_CHECK_INPUT(json.is_object(), where.source, ": field '", where.path, "' must be a JSON object (got ",
                     json_preview(json), ")");
  auto it = json.find("type");
  SWARMT_CHECK_INPUT(it != json.end() && it->is_string(), where.source, ": field '", where.path,
                     ".type' must be a string naming the component (got ",
                     it == json.end() ? std::string("nothing") : json_preview(*it), ")");
  return it->get<std::string>();
}

void throw_unsupported_component(const ComponentPath& where, const std::string& type, const std::string& supported) {
  throw_input_error(where.source, ": ", where.path, ".type '", type, "' is not supported (supported: ", supported, ")");
}

const Json& component_list(const JsonView& view, const std::string& key) {
  const Json& list = view.raw(key);
  SWARMT_CHECK_INPUT(list.is_array(), view.describe(key), " must be a list (got ", json_preview(list), ")");
  return list;
}

MetaspaceOptions read_metaspace_options(const JsonView& view) {
  MetaspaceOptions options;
  options.replacement = view.get_string("replacement", options.replacement);
  SWARMT_CHECK_INPUT(count_code_points(options.replacement) == 1, view.describe("replacement"),
                     " must be exactly one character (got ", json_preview(Json(options.replacement)), ")");
  if (view.has("prepend_scheme")) {
    std::string scheme = view.get_string("prepend_scheme");
    if (scheme == "always") {
      options.prepend_scheme = PrependScheme::Always;
    } else if (scheme == "first") {
      options.prepend_scheme = PrependScheme::First;
    } else if (scheme == "never") {
      options.prepend_scheme = PrependScheme::Never;
    } else {
      throw_input_error(view.describe("prepend_scheme"), " '", scheme,
                        "' is not supported (supported: always, first, never)");
    }
  } else {
    options.prepend_scheme = view.get_bool("add_prefix_space", true) ? PrependScheme::Always : PrependScheme::Never;
  }
  options.split = view.get_bool("split", true);
  return options;
}

void check_chain_growth(const std::string& where, const char* what, size_t step, size_t original, size_t now) {
  SWARMT_CHECK_INPUT(now <= kMaxChainGrowth * original + kChainGrowthSlack, where, ": step ", step,
                     " grew the text from ", original, " to ", now, " bytes (more than ", kMaxChainGrowth,
                     " times): the ", what, " chain multiplies its input");
}

}  // namespace swarmt::tokenizer
