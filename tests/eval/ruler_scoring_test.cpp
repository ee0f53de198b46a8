#include "swarmt/eval/ruler_scoring.h"

#include <gtest/gtest.h>

#include "swarmt/core/error.h"

namespace swarmt::eval {
namespace {

TEST(RulerScoring, string_match_all_is_the_fraction_of_references_found_case_insensitively) {
  EXPECT_DOUBLE_EQ(string_match_all("The numbers are 1234567 and CALM-river.", {"1234567", "calm-RIVER"}), 100.0);
  EXPECT_DOUBLE_EQ(string_match_all("only 1234567 here", {"1234567", "7654321"}), 50.0);
  EXPECT_DOUBLE_EQ(string_match_all("1234567", {"1", "2", "3", "9"}), 75.0);
  EXPECT_DOUBLE_EQ(string_match_all("", {"x"}), 0.0);
}

TEST(RulerScoring, string_match_part_is_one_if_any_reference_is_found) {
  EXPECT_DOUBLE_EQ(string_match_part("Paris is the capital", {"London", "PARIS"}), 100.0);
  EXPECT_DOUBLE_EQ(string_match_part("Berlin", {"London", "Paris"}), 0.0);
}

TEST(RulerScoring, predictions_are_stripped_and_control_characters_become_newlines) {
  EXPECT_EQ(postprocess_prediction("  \t 1234567\x01" "7654321\x1f\n "), "1234567\n7654321");
  EXPECT_EQ(postprocess_prediction(std::string("\x00" "abc", 4)), "abc");
  EXPECT_EQ(postprocess_prediction("a\tb"), "a\nb");
  // Control characters in the prediction compare as newlines.
  EXPECT_DOUBLE_EQ(score_prediction(RulerMetric::StringMatchAll, "123\x02" "456", {"123\n456"}), 100.0);
}

TEST(RulerScoring, each_task_family_uses_rulers_metric) {
  EXPECT_EQ(metric_for_task("niah_single_1"), RulerMetric::StringMatchAll);
  EXPECT_EQ(metric_for_task("niah_multivalue"), RulerMetric::StringMatchAll);
  EXPECT_EQ(metric_for_task("vt"), RulerMetric::StringMatchAll);
  EXPECT_EQ(metric_for_task("cwe"), RulerMetric::StringMatchAll);
  EXPECT_EQ(metric_for_task("passkey"), RulerMetric::StringMatchAll);
  EXPECT_EQ(metric_for_task("qa_1"), RulerMetric::StringMatchPart);
  EXPECT_EQ(metric_for_task("qa_2"), RulerMetric::StringMatchPart);
  EXPECT_EQ(to_string(RulerMetric::StringMatchPart), "string_match_part");
}

TEST(RulerScoring, a_sample_without_references_is_rejected) {
  EXPECT_THROW(string_match_all("x", {}), Error);
  EXPECT_THROW(string_match_part("x", {}), Error);
}

}  // namespace
}  // namespace swarmt::eval
