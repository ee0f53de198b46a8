#include "swarmt/train/distributed/launcher.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <iostream>
#include <thread>

#include "swarmt/core/error.h"

namespace swarmt::train::distributed {

namespace {

// The launcher's flags, removed from the workers' command lines.
const char* const kLauncherFlags[] = {"--nproc-per-node", "--nnodes", "--node-rank", "--master-addr", "--master-port"};

bool is_launcher_flag(const std::string& arg, bool* takes_next) {
  for (const char* flag : kLauncherFlags) {
    const std::string f(flag);
    if (arg == f) {
      *takes_next = true;
      return true;
    }
    if (arg.rfind(f + "=", 0) == 0) {
      *takes_next = false;
      return true;
    }
  }
  return false;
}

// Workers to forward SIGINT/SIGTERM to (written before the handler is installed).
constexpr int kMaxWorkers = 1024;
pid_t g_workers[kMaxWorkers];
std::atomic<int> g_num_workers{0};

void forward_signal(int sig) {
  for (int i = 0; i < g_num_workers.load(); ++i)
    if (g_workers[i] > 0) ::kill(g_workers[i], sig);
}

int exit_code_of(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

std::string describe_status(int status) {
  if (WIFEXITED(status)) return str_cat("exited with status ", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return str_cat("was killed by signal ", WTERMSIG(status), " (", strsignal(WTERMSIG(status)), ")");
  return "stopped";
}

}  // namespace

void check_launch_options(const LaunchOptions& o) {
  SWARMT_CHECK_INPUT(o.nproc_per_node >= 1 && o.nproc_per_node <= kMaxWorkers, "--nproc-per-node must be in [1, ",
                     kMaxWorkers, "] (got ", o.nproc_per_node, ")");
  SWARMT_CHECK_INPUT(o.nnodes >= 1, "--nnodes must be >= 1 (got ", o.nnodes, ")");
  SWARMT_CHECK_INPUT(o.node_rank >= 0 && o.node_rank < o.nnodes, "--node-rank must be in [0, --nnodes) (got ",
                     o.node_rank, " with --nnodes ", o.nnodes, ")");
  SWARMT_CHECK_INPUT(o.master_port >= 0 && o.master_port <= 65535, "--master-port must be in [1, 65535] (got ",
                     o.master_port, ")");
  SWARMT_CHECK_INPUT(o.nnodes == 1 || o.master_port > 0,
                     "--master-port is required with --nnodes > 1 (every node must use the same port)");
  SWARMT_CHECK_INPUT(!o.master_addr.empty(), "--master-addr must not be empty");
}

std::vector<std::string> worker_command(const std::vector<std::string>& argv, int64_t threads) {
  std::vector<std::string> out;
  for (size_t i = 0; i < argv.size(); ++i) {
    bool takes_next = false;
    if (i > 0 && is_launcher_flag(argv[i], &takes_next)) {
      if (takes_next) ++i;
      continue;
    }
    out.push_back(argv[i]);
    if (i == 0 && threads > 0) {
      out.push_back("--threads");
      out.push_back(std::to_string(threads));
    }
  }
  return out;
}

int64_t find_free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  SWARMT_CHECK_INPUT(fd >= 0, "launcher: cannot open a socket to find a free port: ", std::strerror(errno));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
                  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0;
  ::close(fd);
  SWARMT_CHECK_INPUT(ok, "launcher: cannot find a free port: ", std::strerror(errno), " (pass --master-port)");
  return ntohs(addr.sin_port);
}

int launch_workers(const std::vector<std::string>& argv, const LaunchOptions& o) {
  check_launch_options(o);
  SWARMT_CHECK(!argv.empty());
  const int64_t port = o.master_port > 0 ? o.master_port : find_free_port();
  const int64_t world = o.nnodes * o.nproc_per_node;
  std::vector<std::string> command = worker_command(argv, o.threads_per_worker);
  command[0] = "/proc/self/exe";  // this very binary, wherever it was started from

  std::vector<pid_t> pids;
  for (int64_t local = 0; local < o.nproc_per_node; ++local) {
    const int64_t rank = o.node_rank * o.nproc_per_node + local;
    const pid_t pid = ::fork();
    SWARMT_CHECK_INPUT(pid >= 0, "launcher: fork failed: ", std::strerror(errno));
    if (pid == 0) {
      ::setenv("RANK", std::to_string(rank).c_str(), 1);
      ::setenv("WORLD_SIZE", std::to_string(world).c_str(), 1);
      ::setenv("LOCAL_RANK", std::to_string(local).c_str(), 1);
      ::setenv("LOCAL_WORLD_SIZE", std::to_string(o.nproc_per_node).c_str(), 1);
      ::setenv("MASTER_ADDR", o.master_addr.c_str(), 1);
      ::setenv("MASTER_PORT", std::to_string(port).c_str(), 1);
      std::vector<char*> args;
      for (auto& a : command) args.push_back(const_cast<char*>(a.c_str()));
      args.push_back(nullptr);
      ::execv(args[0], args.data());
      std::cerr << "error: launcher: cannot start a worker: " << std::strerror(errno) << std::endl;
      ::_exit(127);
    }
    g_workers[g_num_workers.load()] = pid;
    g_num_workers.fetch_add(1);
    pids.push_back(pid);
  }
  struct sigaction action {};
  action.sa_handler = forward_signal;
  sigemptyset(&action.sa_mask);
  struct sigaction old_int {}, old_term {};
  ::sigaction(SIGINT, &action, &old_int);
  ::sigaction(SIGTERM, &action, &old_term);

  int result = 0;
  size_t alive = pids.size();
  std::chrono::steady_clock::time_point stop_deadline{};
  bool stopping = false;
  while (alive > 0) {
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, stopping ? WNOHANG : 0);
    if (pid < 0 && errno == EINTR) continue;
    if (pid < 0) break;
    if (pid == 0) {  // stopping, nobody exited yet: escalate after the grace period
      if (std::chrono::steady_clock::now() > stop_deadline) {
        for (pid_t p : pids)
          if (p > 0) ::kill(p, SIGKILL);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      continue;
    }
    size_t index = 0;
    while (index < pids.size() && pids[index] != pid) ++index;
    if (index == pids.size()) continue;
    pids[index] = -1;
    g_workers[index] = -1;
    --alive;
    const bool failed = !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    if (failed && result == 0) {
      result = exit_code_of(status);
      if (alive > 0) {
        std::cerr << "error: worker rank " << o.node_rank * o.nproc_per_node + static_cast<int64_t>(index) << " (pid "
                  << pid << ") " << describe_status(status) << "; stopping the other " << alive << " worker(s)"
                  << std::endl;
        for (pid_t p : pids)
          if (p > 0) ::kill(p, SIGTERM);
        stopping = true;
        stop_deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      }
    }
  }
  ::sigaction(SIGINT, &old_int, nullptr);
  ::sigaction(SIGTERM, &old_term, nullptr);
  g_num_workers.store(0);
  return result;
}

}  // namespace swarmt::train::distributed
