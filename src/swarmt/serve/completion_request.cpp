#include "swarmt/serve/completion_request.h"

#include <cmath>
#include <set>

#include "swarmt/core/error.h"
#include "swarmt/serve/api_error.h"

namespace swarmt::serve {
namespace {

std::string json_type_name(const Json& v) { return v.is_number_integer() ? "integer" : v.type_name(); }

std::string require_string(const Json& v, const std::string& param) {
  if (!v.is_string()) throw invalid_request(param, str_cat("'", param, "' must be a string, got ", json_type_name(v)));
  return v.get<std::string>();
}

int64_t require_int(const Json& v, const std::string& param, int64_t lo, int64_t hi) {
  // 5.0 is an integer to JavaScript clients; 5.5 is not.
  const bool integral = v.is_number_integer() || (v.is_number_float() && std::isfinite(v.get<double>()) &&
                                                  std::floor(v.get<double>()) == v.get<double>());
  if (!integral) throw invalid_request(param, str_cat("'", param, "' must be an integer, got ", v.dump()));
  const double as_double = v.get<double>();
  if (as_double < static_cast<double>(lo) || as_double > static_cast<double>(hi))
    throw invalid_request(param, str_cat("'", param, "' must be in ", lo, "..", hi, ", got ", v.dump()));
  return v.is_number_unsigned() ? static_cast<int64_t>(v.get<uint64_t>()) : v.get<int64_t>();
}

double require_number(const Json& v, const std::string& param, double lo, double hi, bool lo_open = false) {
  if (!v.is_number()) throw invalid_request(param, str_cat("'", param, "' must be a number, got ", json_type_name(v)));
  const double x = v.get<double>();
  if (!std::isfinite(x) || x > hi || (lo_open ? x <= lo : x < lo))
    throw invalid_request(param, str_cat("'", param, "' must be in ", lo_open ? "(" : "[", lo, ", ", hi, "], got ", v.dump()));
  return x;
}

bool require_bool(const Json& v, const std::string& param) {
  if (!v.is_boolean()) throw invalid_request(param, str_cat("'", param, "' must be true or false, got ", v.dump()));
  return v.get<bool>();
}

std::vector<int64_t> token_ids(const Json& array, const std::string& param, const RequestLimits& limits) {
  if (array.size() > limits.max_prompt_ids)
    throw invalid_request(param, str_cat("'", param, "' holds ", array.size(), " token ids; at most ",
                                         limits.max_prompt_ids, " are accepted in one request"));
  std::vector<int64_t> ids;
  ids.reserve(array.size());
  for (size_t i = 0; i < array.size(); ++i)
    ids.push_back(require_int(array[i], str_cat(param, "[", i, "]"), 0, (int64_t(1) << 31) - 1));
  return ids;
}

void parse_prompt(const Json& v, CompletionRequest& r, const RequestLimits& limits) {
  if (v.is_string()) {
    r.prompt_text = v.get<std::string>();
    return;
  }
  if (!v.is_array())
    throw invalid_request("prompt", str_cat("'prompt' must be a string or an array of token ids, got ", json_type_name(v)));
  if (!v.empty() && (v[0].is_string() || v[0].is_array())) {
    if (v.size() != 1)
      throw invalid_request("prompt", str_cat("'prompt' holds ", v.size(), " prompts; this server answers one per request"));
    if (v[0].is_string()) {
      r.prompt_text = v[0].get<std::string>();
    } else {
      r.prompt_ids = token_ids(v[0], "prompt[0]", limits);
    }
    return;
  }
  r.prompt_ids = token_ids(v, "prompt", limits);
}

std::string message_content(const Json& v, const std::string& param) {
  if (v.is_string()) return v.get<std::string>();
  if (!v.is_array())
    throw invalid_request(param, str_cat("'", param, "' must be a string or an array of text parts, got ", json_type_name(v)));
  std::string text;
  for (size_t i = 0; i < v.size(); ++i) {
    const std::string part = str_cat(param, "[", i, "]");
    if (!v[i].is_object() || !v[i].contains("type") || v[i]["type"] != "text" || !v[i].contains("text"))
      throw invalid_request(part, str_cat("'", part, "' must be {\"type\": \"text\", \"text\": ...} (only text is supported)"));
    text += require_string(v[i]["text"], part + ".text");
  }
  return text;
}

void parse_messages(const Json& v, CompletionRequest& r) {
  if (!v.is_array() || v.empty())
    throw invalid_request("messages", "'messages' must be a non-empty array of {\"role\", \"content\"} objects");
  for (size_t i = 0; i < v.size(); ++i) {
    const std::string param = str_cat("messages[", i, "]");
    if (!v[i].is_object()) throw invalid_request(param, str_cat("'", param, "' must be an object"));
    for (const auto& [key, value] : v[i].items())
      if (key != "role" && key != "content" && key != "name")
        throw invalid_request(param + "." + key, str_cat("'", param, ".", key, "' is not supported"));
    if (!v[i].contains("role")) throw invalid_request(param + ".role", str_cat("'", param, ".role' is missing"));
    if (!v[i].contains("content")) throw invalid_request(param + ".content", str_cat("'", param, ".content' is missing"));
    ChatTurn turn{require_string(v[i]["role"], param + ".role"), message_content(v[i]["content"], param + ".content")};
    if (turn.role != "system" && turn.role != "user" && turn.role != "assistant")
      throw invalid_request(param + ".role", str_cat("'", param, ".role' must be system, user or assistant, got '",
                                                     turn.role, "'"));
    r.messages.push_back(std::move(turn));
  }
}

void parse_stop(const Json& v, CompletionRequest& r) {
  if (v.is_null()) return;
  if (v.is_string()) {
    if (!v.get<std::string>().empty()) r.stop.push_back(v.get<std::string>());
    return;
  }
  if (!v.is_array() || v.size() > 4)
    throw invalid_request("stop", "'stop' must be a string or an array of at most 4 strings");
  for (size_t i = 0; i < v.size(); ++i) {
    std::string s = require_string(v[i], str_cat("stop[", i, "]"));
    if (s.empty()) throw invalid_request(str_cat("stop[", i, "]"), "stop strings must not be empty");
    r.stop.push_back(std::move(s));
  }
}

// Fields OpenAI defines that this server does not implement: accepted at the value that changes nothing.
void check_neutral(const std::string& key, const Json& v) {
  auto refuse = [&](const std::string& what) {
    throw invalid_request(key, str_cat("'", key, "' ", what, " is not supported by this server, got ", v.dump()));
  };
  if (v.is_null()) return;
  if (key == "n" || key == "best_of") {
    if (!(v.is_number() && v.get<double>() == 1)) refuse("other than 1");
  } else if (key == "echo") {
    if (!(v.is_boolean() && !v.get<bool>())) refuse("true");
  } else if (key == "logprobs" || key == "top_logprobs") {
    if (!((v.is_boolean() && !v.get<bool>()) || (v.is_number() && v.get<double>() == 0))) refuse("(log probabilities)");
  } else if (key == "presence_penalty" || key == "frequency_penalty") {
    if (!(v.is_number() && v.get<double>() == 0)) refuse("other than 0");
  } else if (key == "logit_bias") {
    if (!(v.is_object() && v.empty())) refuse("(a bias)");
  } else if (key == "suffix") {
    refuse("(insertion)");
  }
}

}  // namespace

void check_json_nesting(const std::string& body, int max_depth) {
  if (json_nesting_depth(body) > static_cast<size_t>(max_depth))
    throw invalid_request("", str_cat("the request body nests deeper than ", max_depth, " levels"));
}

void check_session_id(const std::string& id, const std::string& param) {
  bool ok = !id.empty() && id.size() <= 128 && id[0] != '.';
  for (char c : id) ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.');
  if (!ok)
    throw invalid_request(param, str_cat("'", param, "' must be 1 to 128 characters of A-Z a-z 0-9 _ - . (not starting "
                                         "with '.'), got ", Json(id).dump(-1, ' ', false, Json::error_handler_t::replace)));
}

CompletionRequest parse_completion_request(const Json& body, bool chat, const RequestLimits& limits) {
  if (!body.is_object()) throw invalid_request("", "the request body must be a JSON object");
  CompletionRequest r;
  r.chat = chat;
  r.max_tokens = chat ? limits.max_tokens : std::min<int64_t>(16, limits.max_tokens);
  static const std::set<std::string> kNeutral = {"n", "best_of", "echo", "logprobs", "top_logprobs", "presence_penalty",
                                                 "frequency_penalty", "logit_bias", "suffix"};
  for (const auto& [key, value] : body.items()) {
    if (key == "model") {
      r.model = require_string(value, key);
    } else if (key == "prompt" && !chat) {
      parse_prompt(value, r, limits);
    } else if (key == "messages" && chat) {
      parse_messages(value, r);
    } else if (key == "max_tokens" || (chat && key == "max_completion_tokens")) {
      if (!value.is_null()) r.max_tokens = require_int(value, key, 0, limits.max_tokens);
    } else if (key == "temperature") {
      if (!value.is_null()) r.temperature = require_number(value, key, 0.0, 2.0);
    } else if (key == "top_p") {
      if (!value.is_null()) r.top_p = require_number(value, key, 0.0, 1.0, /*lo_open=*/true);
    } else if (key == "top_k") {
      if (!value.is_null()) r.top_k = require_int(value, key, 0, int64_t(1) << 31);
    } else if (key == "stop") {
      parse_stop(value, r);
    } else if (key == "seed") {
      if (!value.is_null())
        r.seed = static_cast<uint64_t>(require_int(value, key, std::numeric_limits<int64_t>::min(),
                                                   std::numeric_limits<int64_t>::max()));
    } else if (key == "stream") {
      if (!value.is_null()) r.stream = require_bool(value, key);
    } else if (key == "stream_options") {
      if (value.is_null()) continue;
      if (!value.is_object()) throw invalid_request(key, "'stream_options' must be an object");
      for (const auto& [k, v] : value.items()) {
        if (k != "include_usage") throw invalid_request("stream_options." + k, str_cat("'stream_options.", k, "' is not supported"));
        r.include_usage = require_bool(v, "stream_options.include_usage");
      }
    } else if (key == "session_id") {
      if (!value.is_null()) {
        r.session_id = require_string(value, key);
        check_session_id(r.session_id, key);
      }
    } else if (key == "ignore_eos") {
      r.ignore_eos = require_bool(value, key);
    } else if (key == "return_tokens") {
      r.return_tokens = require_bool(value, key);
    } else if (key == "user") {
      if (!value.is_null()) require_string(value, key);
    } else if (kNeutral.count(key)) {
      check_neutral(key, value);
    } else {
      throw invalid_request(key, str_cat("unknown field '", key, "'"));
    }
  }
  if (chat && r.messages.empty()) throw invalid_request("messages", "'messages' is missing");
  if (!chat && !r.prompt_text && r.prompt_ids.empty() && !body.contains("prompt"))
    throw invalid_request("prompt", "'prompt' is missing");
  if (r.include_usage && !r.stream)
    throw invalid_request("stream_options", "'stream_options' is only allowed with \"stream\": true");
  return r;
}

}  // namespace swarmt::serve
