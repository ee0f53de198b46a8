// Crash-safety test hook: lets a test SIGKILL a process at an exact point of a file or checkpoint write.
//
// The writers of atomic files and checkpoints call kill_point() at every step whose interruption could
// leave something half-done on disk (a file written but not renamed, a directory renamed away but the
// new one not yet in place, ...). Normally that is a getenv() and nothing else. With the environment
// variable SWARMT_TEST_KILL_AT=N (N >= 1), the N-th kill point this process reaches raises SIGKILL: no
// destructor, no atexit handler and no buffered write runs, exactly as if the machine's owner had killed
// the job there. Crash-safety tests pick N at random and then check that what is on disk is either the
// old state or the complete new one. SWARMT_TEST_KILL_AT=report only counts, and prints
// "swarmt: N kill points reached" to stderr when the process exits normally.
#pragma once

#include <cstdint>

namespace swarmt {

// The environment variable read by kill_point().
constexpr const char* kKillAtEnvironmentVariable = "SWARMT_TEST_KILL_AT";

// Counts one kill point (`where` names it, for readers of the code and of core dumps) and raises SIGKILL
// if it is the SWARMT_TEST_KILL_AT-th one. Counting only happens while the variable is set.
void kill_point(const char* where);

// Kill points counted so far in this process (while SWARMT_TEST_KILL_AT was set).
int64_t kill_points_reached();

}  // namespace swarmt
