// Leftovers of writers that died: temporary files and directories whose name carries the pid of the
// process that wrote them (".tmp-<pid>" and ".old-<pid>", see atomic_file.h and token_file.h).
//
// A process killed in the middle of a write leaves its temporary file behind; nothing else ever removes
// it (a killed `data prepare` left gigabytes). The next command that writes the same output removes the
// leftovers of processes that no longer exist. A leftover whose pid is alive is left alone: it may be a
// write in progress (or the pid was reused, in which case it goes once that process is gone too).
#pragma once

#include <string>
#include <vector>

namespace swarmt {

// The writer's pid in a temporary name ("x.tokens.tmp-123", ".checkpoint-00000002.tmp-123-0",
// ".checkpoint-00000002.old-123-1"), or -1 when the name carries none.
long writer_pid_of_temp_name(const std::string& name);

// True when no process with this pid exists (kill(pid, 0) fails with ESRCH). A process of another user
// counts as alive.
bool process_is_gone(long pid);

// Removes the entries of `dir` whose name starts with one of `prefixes` and carries the pid of a process
// that is gone (files and whole directories). Returns the removed paths, sorted.
std::vector<std::string> remove_leftovers_of_dead_writers(const std::string& dir, const std::vector<std::string>& prefixes);

}  // namespace swarmt
