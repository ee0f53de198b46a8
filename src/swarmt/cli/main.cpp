// swarmt: the command-line entry point. See command.h for how subcommands plug in.
#include <c10/util/Exception.h>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <new>

#include "swarmt/cli/command.h"
#include "swarmt/core/blas_check.h"
#include "swarmt/core/error.h"
#include "swarmt/core/malloc_tuning.h"
#include "swarmt/core/threads.h"

namespace {

// "<path>: Too many levels of symbolic links": a file system error is about a path the user gave (a
// symlink loop, a permission, a file where a directory belongs), so it is bad input naming the path.
std::string describe_filesystem_error(const std::filesystem::filesystem_error& e) {
  std::string paths = e.path1().string();
  if (!e.path2().empty()) paths += ", " + e.path2().string();
  return (paths.empty() ? std::string("file system") : paths) + ": " + e.code().message();
}

// --threads: 1 .. max_thread_count(). Zero and negative counts used to be accepted silently.
CLI::Validator thread_count_check() {
  const std::string range = "1.." + std::to_string(swarmt::max_thread_count());
  return CLI::Validator(
      [](std::string& text) -> std::string { return swarmt::thread_count_problem(text); },
      range, "thread count");
}

int run_guarded(const std::function<int()>& run) {
  try {
    return run();
  } catch (const std::filesystem::filesystem_error& e) {
    std::fflush(stdout);
    std::cerr << "error: " << describe_filesystem_error(e) << std::endl;
    return 2;
  } catch (const swarmt::Error& e) {
    std::fflush(stdout);
    std::cerr << "error: " << e.what() << std::endl;
    return e.kind() == swarmt::ErrorKind::BadInput ? 2 : 1;
  } catch (const c10::Error& e) {
    std::fflush(stdout);
    std::cerr << "error: internal tensor error: " << e.what_without_backtrace() << std::endl;
    return 1;
  } catch (const std::bad_alloc&) {
    std::fflush(stdout);
    std::cerr << "error: out of memory" << std::endl;
    return 1;
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::cerr << "error: internal: " << e.what() << std::endl;
    return 1;
  }
}

}  // namespace

int main(int argc, char** argv) {
  swarmt::ensure_best_blas_kernels(argc, argv);  // may restart the process once (see blas_check.h)
  swarmt::tune_malloc_for_tensors();

  CLI::App app{"swarmt " SWARMT_VERSION
               ": long-context language models that remember beyond their attention window\n"
               "(SWAX sliding-window/RNN hybrids, ARMT associative memory over pretrained LLMs)"};
  app.name("swarmt");
  app.require_subcommand(1);
  app.set_version_flag("--version", "swarmt " SWARMT_VERSION);
  swarmt::cli::GlobalOptions globals;
  globals.argv.assign(argv, argv + argc);
  app.add_option("--threads", globals.threads, "Intra-op threads (default: all cores)")->check(thread_count_check());
  app.add_flag("-q,--quiet", globals.quiet, "No progress bars or informational output");

  swarmt::cli::CommandList commands;
  swarmt::cli::register_info(app, globals, commands);
  swarmt::cli::register_train(app, globals, commands);
  swarmt::cli::register_data(app, globals, commands);
  swarmt::cli::register_generate(app, globals, commands);
  swarmt::cli::register_serve(app, globals, commands);
  swarmt::cli::register_forward(app, globals, commands);
  swarmt::cli::register_bench(app, globals, commands);
  swarmt::cli::register_eval(app, globals, commands);
  swarmt::cli::register_model(app, globals, commands);
  swarmt::cli::register_armt(app, globals, commands);
  swarmt::cli::register_tokenize(app, globals, commands);
  swarmt::cli::register_report(app, globals, commands);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    std::cerr << "error: " << e.what() << "\nRun 'swarmt --help' (or 'swarmt <command> --help') for usage."
              << std::endl;
    return 2;
  }
  return run_guarded([&]() -> int {
    swarmt::configure_threads(globals.threads);
    for (const auto& command : commands)
      if (command.app->parsed()) return command.run();
    swarmt::throw_input_error("no command given; run 'swarmt --help'");
  });
}
