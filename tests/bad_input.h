// The message of the BadInput error `f` throws, or "(no error)"; fails the test if the error is of
// another kind. For tests that pin the exact message a user sees.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "swarmt/core/error.h"

namespace swarmt::testing {

inline std::string bad_input_message(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput) << e.what();
    return e.what();
  }
  return "(no error)";
}

// The same under the short name most tests use (one definition, so test files can share a build unit).
inline std::string error_of(const std::function<void()>& f) { return bad_input_message(f); }

}  // namespace swarmt::testing
