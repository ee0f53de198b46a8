#include "swarmt/eval/ruler_scoring.h"

#include "swarmt/core/error.h"

namespace swarmt::eval {
namespace {

std::string ascii_lower(const std::string& s) {
  std::string out = s;
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

// Python's str.strip() set within ASCII: space, \t \n \v \f \r and the separators \x1c-\x1f.
bool is_python_space(char c) {
  return c == ' ' || (c >= '\t' && c <= '\r') || (c >= '\x1c' && c <= '\x1f');
}

std::string strip(const std::string& s) {
  size_t begin = 0, end = s.size();
  while (begin < end && is_python_space(s[begin])) ++begin;
  while (end > begin && is_python_space(s[end - 1])) --end;
  return s.substr(begin, end - begin);
}

}  // namespace

std::string to_string(RulerMetric metric) {
  return metric == RulerMetric::StringMatchAll ? "string_match_all" : "string_match_part";
}

std::string postprocess_prediction(const std::string& prediction) {
  std::string s = strip(prediction);
  for (char& c : s)
    if (static_cast<unsigned char>(c) < 0x20) c = '\n';
  return strip(s);
}

double string_match_all(const std::string& prediction, const std::vector<std::string>& references) {
  SWARMT_CHECK_INPUT(!references.empty(), "a sample to score has no reference answers");
  const std::string pred = ascii_lower(prediction);
  int found = 0;
  for (const auto& r : references) found += pred.find(ascii_lower(r)) != std::string::npos ? 1 : 0;
  return 100.0 * found / static_cast<double>(references.size());
}

double string_match_part(const std::string& prediction, const std::vector<std::string>& references) {
  SWARMT_CHECK_INPUT(!references.empty(), "a sample to score has no reference answers");
  const std::string pred = ascii_lower(prediction);
  for (const auto& r : references)
    if (pred.find(ascii_lower(r)) != std::string::npos) return 100.0;
  return 0.0;
}

RulerMetric metric_for_task(const std::string& task) {
  // RULER maps each task family to a metric; only QA ("qa", "qa_1", "qa_2") uses string_match_part.
  if (task == "qa" || task.rfind("qa_", 0) == 0) return RulerMetric::StringMatchPart;
  return RulerMetric::StringMatchAll;
}

double score_prediction(RulerMetric metric, const std::string& raw_prediction,
                        const std::vector<std::string>& references) {
  std::string pred = postprocess_prediction(raw_prediction);
  return metric == RulerMetric::StringMatchAll ? string_match_all(pred, references)
                                               : string_match_part(pred, references);
}

}  // namespace swarmt::eval
