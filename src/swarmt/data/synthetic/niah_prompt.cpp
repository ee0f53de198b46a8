// NIAH prompt text: variants, template, needle sentence, query joining (RULER constants.py / niah.py).
#include <cmath>

#include "swarmt/core/error.h"
#include "swarmt/data/synthetic/niah.h"

namespace swarmt::data {

std::string to_string(HaystackType type) {
  switch (type) {
    case HaystackType::Noise: return "noise";
    case HaystackType::Essay: return "essay";
    case HaystackType::Needle: return "needle";
  }
  return "?";
}

std::string to_string(NeedleType type) {
  switch (type) {
    case NeedleType::Words: return "words";
    case NeedleType::Numbers: return "numbers";
    case NeedleType::Uuids: return "uuids";
  }
  return "?";
}

HaystackType parse_haystack_type(const std::string& name) {
  if (name == "noise") return HaystackType::Noise;
  if (name == "essay") return HaystackType::Essay;
  if (name == "needle") return HaystackType::Needle;
  throw_input_error("unknown haystack type '", name, "' (expected noise, essay or needle)");
}

NeedleType parse_needle_type(const std::string& name) {
  if (name == "words") return NeedleType::Words;
  if (name == "numbers") return NeedleType::Numbers;
  if (name == "uuids") return NeedleType::Uuids;
  throw_input_error("unknown needle type '", name, "' (expected words, numbers or uuids)");
}

namespace {

NiahTaskConfig variant(const char* name, HaystackType haystack, NeedleType k_type, NeedleType v_type, int k, int v,
                       int q) {
  NiahTaskConfig c;
  c.name = name;
  c.haystack = haystack;
  c.key_type = k_type;
  c.value_type = v_type;
  c.num_needle_k = k;
  c.num_needle_v = v;
  c.num_needle_q = q;
  c.tokens_to_generate = 128;
  return c;
}

// scripts/synthetic.yaml (RULER), the NIAH part.
const std::vector<NiahTaskConfig>& variants() {
  using H = HaystackType;
  using N = NeedleType;
  static const std::vector<NiahTaskConfig> kVariants = {
      variant("niah_single_1", H::Noise, N::Words, N::Numbers, 1, 1, 1),
      variant("niah_single_2", H::Essay, N::Words, N::Numbers, 1, 1, 1),
      variant("niah_single_3", H::Essay, N::Words, N::Uuids, 1, 1, 1),
      variant("niah_multikey_1", H::Essay, N::Words, N::Numbers, 4, 1, 1),
      variant("niah_multikey_2", H::Needle, N::Words, N::Numbers, 1, 1, 1),
      variant("niah_multikey_3", H::Needle, N::Uuids, N::Uuids, 1, 1, 1),
      variant("niah_multivalue", H::Essay, N::Words, N::Numbers, 1, 4, 1),
      variant("niah_multiquery", H::Essay, N::Words, N::Numbers, 1, 1, 4),
  };
  return kVariants;
}

// Python's str.replace: every non-overlapping occurrence, left to right.
std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  size_t pos = 0;
  while ((pos = text.find(from, pos)) != std::string::npos) {
    text.replace(pos, from.size(), to);
    pos += to.size();
  }
  return text;
}

// Python's str.format for the named fields {type_needle_v}, {context} and {query}, in one pass (so
// braces inside the substituted context are left alone).
std::string format_fields(const std::string& templ, const std::string& type_needle_v, const std::string& context,
                          const std::string& query) {
  std::string out;
  out.reserve(templ.size() + context.size() + 4 * query.size());
  size_t i = 0;
  while (i < templ.size()) {
    if (templ[i] == '{') {
      size_t close = templ.find('}', i);
      SWARMT_CHECK(close != std::string::npos, "unclosed field in the NIAH template");
      std::string field = templ.substr(i + 1, close - i - 1);
      if (field == "type_needle_v") {
        out += type_needle_v;
      } else if (field == "context") {
        out += context;
      } else if (field == "query") {
        out += query;
      } else {
        SWARMT_CHECK(false, "unknown field {", field, "} in the NIAH template");
      }
      i = close + 1;
    } else {
      out += templ[i++];
    }
  }
  return out;
}

}  // namespace

const std::vector<std::string>& niah_variant_names() {
  static const std::vector<std::string> kNames = [] {
    std::vector<std::string> names;
    for (const auto& v : variants()) names.push_back(v.name);
    return names;
  }();
  return kNames;
}

NiahTaskConfig niah_variant(const std::string& name) {
  for (const auto& v : variants())
    if (v.name == name) return v;
  std::string known;
  for (const auto& n : niah_variant_names()) known += (known.empty() ? "" : ", ") + n;
  throw_input_error("unknown NIAH variant '", name, "' (known: ", known, ")");
}

const std::vector<int>& ruler_depths() {
  // np.round(np.linspace(0, 100, num=40)): 100 * i / 39 is never exactly k + 0.5 for 0 < i < 39, so
  // round-half-to-even and round-half-away agree.
  static const std::vector<int> kDepths = [] {
    std::vector<int> d;
    for (int i = 0; i < 40; ++i) d.push_back(static_cast<int>(std::lround(100.0 * i / 39.0)));
    return d;
  }();
  return kDepths;
}

std::string niah_needle_sentence(NeedleType value_type, const std::string& key, const std::string& value) {
  return "One of the special magic " + to_string(value_type) + " for " + key + " is: " + value + ".";
}

std::string join_queries(const std::vector<std::string>& queries) {
  SWARMT_CHECK(!queries.empty());
  if (queries.size() == 1) return queries[0];
  std::string out;
  for (size_t i = 0; i + 1 < queries.size(); ++i) out += (i ? ", " : "") + queries[i];
  return out + ", and " + queries.back();
}

std::string format_niah_prompt(const NiahTaskConfig& task, const std::string& context,
                               const std::vector<std::string>& queries) {
  // scripts/data/synthetic/constants.py: template + answer_prefix (scripts/data/prepare.py appends the
  // prefix after the model template, which is the identity "{task_template}" for base models).
  std::string templ =
      "Some special magic {type_needle_v} are hidden within the following text. Make sure to memorize it. I will "
      "quiz you about the {type_needle_v} afterwards.\n{context}\nWhat are all the special magic {type_needle_v} "
      "for {query} mentioned in the provided text?"
      " The special magic {type_needle_v} for {query} mentioned in the provided text are";
  std::string type_needle_v = to_string(task.value_type);
  if (task.num_needle_q * task.num_needle_v == 1) {
    // niah.py's singular rewrite, applied to the template before formatting, in this order.
    templ = replace_all(templ, "Some", "A");
    templ = replace_all(templ, "are all", "is");
    templ = replace_all(templ, "are", "is");
    templ = replace_all(templ, "answers", "answer");
    type_needle_v.pop_back();  // "numbers" -> "number"
  }
  return format_fields(templ, type_needle_v, context, join_queries(queries));
}

}  // namespace swarmt::data
