// The one error type of swarmt.
//
// Every failure the user can cause (a malformed file, a bad argument, a shape that does not fit) is an
// Error of kind BadInput whose message names the file or field and the problem. Failures that mean a bug
// in swarmt are kind Internal. The CLI prints "error: <message>" and exits with 2 (BadInput) or 1
// (Internal); nothing else may terminate the process.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace swarmt {

enum class ErrorKind { BadInput, Internal };

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, std::string message) : std::runtime_error(std::move(message)), kind_(kind) {}
  ErrorKind kind() const { return kind_; }

 private:
  ErrorKind kind_;
};

namespace detail {
inline void append_all(std::ostringstream&) {}
template <typename T, typename... Rest>
void append_all(std::ostringstream& os, const T& first, const Rest&... rest) {
  os << first;
  append_all(os, rest...);
}
}  // namespace detail

// Concatenates its arguments with operator<< into one string.
template <typename... Args>
std::string str_cat(const Args&... args) {
  std::ostringstream os;
  detail::append_all(os, args...);
  return os.str();
}

// Throws a BadInput error whose message is the concatenation of the arguments.
template <typename... Args>
[[noreturn]] void throw_input_error(const Args&... args) {
  throw Error(ErrorKind::BadInput, str_cat(args...));
}

// Throws an Internal error (a bug in swarmt, not in the user's input).
template <typename... Args>
[[noreturn]] void throw_internal_error(const Args&... args) {
  throw Error(ErrorKind::Internal, str_cat(args...));
}

}  // namespace swarmt

// Checks a condition on user input; on failure throws BadInput with the remaining arguments as message.
#define SWARMT_CHECK_INPUT(cond, ...)                  \
  do {                                                 \
    if (!(cond)) ::swarmt::throw_input_error(__VA_ARGS__); \
  } while (0)

// Checks an internal invariant; on failure throws Internal naming the source location.
#define SWARMT_CHECK(cond, ...)                                                                     \
  do {                                                                                              \
    if (!(cond))                                                                                    \
      ::swarmt::throw_internal_error(__FILE__, ":", __LINE__, ": check failed: " #cond ". ", \
                                     ##__VA_ARGS__);                                                \
  } while (0)
