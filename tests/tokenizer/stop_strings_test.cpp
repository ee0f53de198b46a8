#include "swarmt/tokenizer/stop_strings.h"

#include <gtest/gtest.h>

namespace swarmt::tokenizer {
namespace {

// Feeds pieces, returns everything released (push and final flush) and whether it stopped.
std::pair<std::string, bool> run_filter(const std::vector<std::string>& stops, const std::vector<std::string>& pieces) {
  StopStringFilter filter(stops);
  std::string out;
  for (const auto& p : pieces) out += filter.push(p);
  out += filter.flush();
  return {out, filter.stopped()};
}

TEST(StopStringFilter, text_before_a_stop_string_split_over_pieces_is_released_and_the_rest_dropped) {
  EXPECT_EQ(run_filter({"END"}, {"hello E", "N", "D and more"}), std::make_pair(std::string("hello "), true));
  EXPECT_EQ(run_filter({"b", "xyz"}, {"aaxy", "zb"}), std::make_pair(std::string("aa"), true));
}

TEST(StopStringFilter, without_a_stop_string_everything_comes_out_once) {
  EXPECT_EQ(run_filter({"END"}, {"EN", "d", "E", "N"}), std::make_pair(std::string("ENdEN"), false));
  EXPECT_EQ(run_filter({}, {"a", "b"}), std::make_pair(std::string("ab"), false));
  EXPECT_EQ(run_filter({""}, {"a", "b"}), std::make_pair(std::string("ab"), false));  // empty stops are ignored
}

TEST(StopStringFilter, holds_back_only_what_could_start_a_stop_string_and_never_splits_a_character) {
  StopStringFilter filter({"STOP"});
  EXPECT_EQ(filter.push("abcdef"), "abc");  // 3 bytes held: "def" could be the start of nothing, but the hold is by length
  // "é" is two bytes: a release never ends between them.
  StopStringFilter utf8({"xy"});
  EXPECT_EQ(utf8.push("a\xC3"), "a");
  EXPECT_EQ(utf8.push("\xA9z"), "\xC3\xA9");
  EXPECT_EQ(utf8.flush(), "z");
}

}  // namespace
}  // namespace swarmt::tokenizer
