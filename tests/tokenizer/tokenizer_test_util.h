// Helpers for the tokenizer tests: building small tokenizer.json documents and checking BadInput messages.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "swarmt/core/error.h"
#include "swarmt/core/json.h"
#include "swarmt/tokenizer/tokenizer.h"

namespace swarmt::tokenizer::test_support {

// A minimal valid BPE tokenizer.json: vocab from `tokens` (id = position), `merges` as pairs, no
// normalizer/pre-tokenizer/decoder. Tests modify the returned JSON before loading it.
inline Json toy_tokenizer_json(const std::vector<std::string>& tokens,
                               const std::vector<std::pair<std::string, std::string>>& merges) {
  Json vocab = Json::object();
  for (size_t i = 0; i < tokens.size(); ++i) vocab[tokens[i]] = i;
  Json merge_list = Json::array();
  for (const auto& [left, right] : merges) merge_list.push_back(Json::array({left, right}));
  Json model = Json::object();
  model["type"] = "BPE";
  model["vocab"] = vocab;
  model["merges"] = merge_list;
  Json doc = Json::object();
  doc["version"] = "1.0";
  doc["added_tokens"] = Json::array();
  doc["model"] = model;
  return doc;
}

inline Tokenizer load(const Json& doc) { return Tokenizer::from_json(doc.dump(), "tokenizer.json"); }

// Expects `action` to throw a BadInput error whose message contains every one of `fragments`.
inline ::testing::AssertionResult ThrowsBadInput(const std::function<void()>& action,
                                                 const std::vector<std::string>& fragments) {
  try {
    action();
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::BadInput)
      return ::testing::AssertionFailure() << "an Internal error instead of BadInput: " << e.what();
    std::string message = e.what();
    for (const auto& fragment : fragments) {
      if (message.find(fragment) == std::string::npos)
        return ::testing::AssertionFailure() << "message \"" << message << "\" lacks \"" << fragment << "\"";
    }
    return ::testing::AssertionSuccess();
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "a non-swarmt exception: " << e.what();
  }
  return ::testing::AssertionFailure() << "no exception";
}

}  // namespace swarmt::tokenizer::test_support
