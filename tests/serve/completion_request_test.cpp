#include "swarmt/serve/completion_request.h"

#include <gtest/gtest.h>

#include "swarmt/serve/api_error.h"

namespace swarmt::serve {
namespace {

// The param of the 400 a body gets ("" if it is accepted).
std::string refused_param(const std::string& body, bool chat = false) {
  try {
    parse_completion_request(Json::parse(body), chat, RequestLimits{});
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status, 400) << body;
    return e.param.empty() ? "(body)" : e.param;
  }
  return "";
}

TEST(CompletionRequest, reads_openai_fields_with_their_defaults) {
  const auto r = parse_completion_request(Json::parse(R"({"model": "m", "prompt": "hi"})"), false, RequestLimits{});
  EXPECT_EQ(*r.prompt_text, "hi");
  EXPECT_EQ(r.max_tokens, 16);
  EXPECT_EQ(r.temperature, 1.0);
  EXPECT_FALSE(r.stream);
  const auto c = parse_completion_request(
      Json::parse(R"({"messages": [{"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}],
                      "max_completion_tokens": 7, "stop": ["x", "y"], "seed": 5, "stream": true,
                      "stream_options": {"include_usage": true}, "session_id": "doc-1", "n": 1, "user": "u"})"),
      true, RequestLimits{});
  EXPECT_EQ(c.messages.at(0).content, "ab");
  EXPECT_EQ(c.max_tokens, 7);
  EXPECT_EQ(c.stop, (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(*c.seed, 5u);
  EXPECT_TRUE(c.include_usage);
  EXPECT_EQ(c.session_id, "doc-1");
  const auto ids = parse_completion_request(Json::parse(R"({"prompt": [[3, 4, 5]]})"), false, RequestLimits{});
  EXPECT_EQ(ids.prompt_ids, (std::vector<int64_t>{3, 4, 5}));
}

TEST(CompletionRequest, every_wrong_field_is_refused_naming_it) {
  EXPECT_EQ(refused_param(R"({"prompt": "a", "max_tokens": "5"})"), "max_tokens");
  EXPECT_EQ(refused_param(R"({"prompt": "a", "max_tokens": -1})"), "max_tokens");
  EXPECT_EQ(refused_param(R"({"prompt": "a", "max_tokens": 1e12})"), "max_tokens");
  EXPECT_EQ(refused_param(R"({"prompt": "a", "max_tokens": 2.5})"), "max_tokens");
  EXPECT_EQ(refused_param(R"({"prompt": "a", "temperature": 3})"), "temperature");
  EXPECT_EQ(refused_param(R"({"prompt": "a", "top_p": 0})"), "top_p");
  EXPECT_EQ(refused_param(R"({"prompt": "a", "stop": ["a", "b", "c", "d", "e"]})"), "stop");
  EXPECT_EQ(refused_param(R"({"prompt": "a", "stop": [""]})"), "stop[0]");
  EXPECT_EQ(refused_param(R"({"prompt": "a", "tempreature": 0})"), "tempreature");
  EXPECT_EQ(refused_param(R"({"prompt": "a", "n": 2})"), "n");
  EXPECT_EQ(refused_param(R"({"prompt": "a", "presence_penalty": 0.5})"), "presence_penalty");
  EXPECT_EQ(refused_param(R"({"prompt": [1, -2]})"), "prompt[1]");
  EXPECT_EQ(refused_param(R"({"prompt": ["a", "b"]})"), "prompt");
  EXPECT_EQ(refused_param(R"({"prompt": "a", "session_id": "../etc"})"), "session_id");
  EXPECT_EQ(refused_param(R"({"prompt": "a", "stream_options": {"include_usage": true}})"), "stream_options");
  EXPECT_EQ(refused_param(R"({})"), "prompt");
  EXPECT_EQ(refused_param(R"([1, 2])"), "(body)");
  EXPECT_EQ(refused_param(R"({"messages": []})", true), "messages");
  EXPECT_EQ(refused_param(R"({"messages": [{"role": "robot", "content": "x"}]})", true), "messages[0].role");
  EXPECT_EQ(refused_param(R"({"messages": [{"role": "user"}]})", true), "messages[0].content");
  EXPECT_EQ(refused_param(R"({"messages": [{"role": "user", "content": [{"type": "image_url"}]}]})", true),
            "messages[0].content[0]");
  EXPECT_EQ(refused_param(R"({"prompt": "a"})", true), "prompt");  // chat takes messages
}

TEST(CompletionRequest, bodies_nested_past_the_limit_are_refused_before_parsing) {
  EXPECT_NO_THROW(check_json_nesting(R"({"messages": [{"content": [{"text": "[[[[[[[[[[{{{{"}]}]})", 5));
  EXPECT_THROW(check_json_nesting(R"({"a": [[[[1]]]]})", 4), ApiError);
  EXPECT_NO_THROW(check_json_nesting(R"({"a": "\"[[[[[[\""})", 2));  // brackets inside a string with escaped quotes
  EXPECT_THROW(check_json_nesting(std::string(100000, '['), 32), ApiError);
}

}  // namespace
}  // namespace swarmt::serve
