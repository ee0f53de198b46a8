// Test helpers for crash-safety tests: start a process, SIGKILL it at a random moment or at an exact
// kill point (SWARMT_TEST_KILL_AT, see swarmt/core/kill_point.h), and learn how it ended.
//
//   pid_t pid = spawn_command({SWARMT_BINARY, "train", ...}, {{"SWARMT_TEST_KILL_AT", "17"}});
//   ChildExit end = wait_child(pid);              // killed at its 17th kill point
//   ChildExit end = kill_after(pid, 250ms);       // or: killed from outside after 250 ms
//
// Header-only so that any test file can include it.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace swarmt::testing {

// How a child process ended.
struct ChildExit {
  bool exited = false;  // returned from main / called exit: exit_code is valid
  int exit_code = -1;
  int signal = 0;       // the signal that terminated it, 0 if it exited
  bool killed() const { return signal == SIGKILL; }
  std::string describe() const {
    return exited ? "exited with " + std::to_string(exit_code) : "terminated by signal " + std::to_string(signal);
  }
};

namespace detail {
inline void set_environment(const std::map<std::string, std::string>& env) {
  for (const auto& [name, value] : env) ::setenv(name.c_str(), value.c_str(), 1);
}
}  // namespace detail

// Runs `body` in a forked copy of this process with `env` added to its environment. The child exits with
// 0 when body returns and 3 if it throws; it never returns into the caller (no test framework code runs
// in it). Only for bodies that need no threads of the parent (fork copies the calling thread only).
inline pid_t fork_child(const std::function<void()>& body, const std::map<std::string, std::string>& env = {}) {
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid > 0) return pid;
  int code = 0;
  try {
    detail::set_environment(env);
    body();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "child %d: %s\n", static_cast<int>(::getpid()), e.what());
    code = 3;
  } catch (...) {
    code = 3;
  }
  std::fflush(nullptr);
  ::_exit(code);
}

// Starts a program (argv[0] is looked up in PATH) with `env` added to its environment.
inline pid_t spawn_command(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env = {}) {
  if (argv.empty()) throw std::runtime_error("spawn_command: empty argv");
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid > 0) return pid;
  detail::set_environment(env);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  ::execvp(args[0], args.data());
  std::perror(args[0]);
  ::_exit(127);
}

// Waits for the child to end.
inline ChildExit wait_child(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw std::runtime_error("waitpid failed");
  }
  ChildExit end;
  if (WIFEXITED(status)) {
    end.exited = true;
    end.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    end.signal = WTERMSIG(status);
  }
  return end;
}

// Lets the child run for `delay`, then SIGKILLs it (unless it already ended) and waits for it.
inline ChildExit kill_after(pid_t pid, std::chrono::microseconds delay) {
  std::this_thread::sleep_for(delay);
  ::kill(pid, SIGKILL);
  return wait_child(pid);
}

}  // namespace swarmt::testing
