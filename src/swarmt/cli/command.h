// How subcommands plug into the swarmt executable.
//
// Each subcommand lives in its own file and exposes one register_* function that adds its CLI11
// subcommand (with options bound to a heap-allocated options struct) and appends the function to run
// when that subcommand is the one parsed. main() parses, configures threads, then runs it inside the
// error guard (exit 2 for bad input, 1 for internal failures).
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

namespace swarmt::cli {

struct GlobalOptions {
  int threads = 0;     // <= 0: all available cores
  bool quiet = false;  // no progress bars or informational logs
  std::vector<std::string> argv;  // the command line, for the data-parallel launcher
};

struct Command {
  CLI::App* app;               // the (leaf) subcommand
  std::function<int()> run;    // returns the exit status
};

using CommandList = std::vector<Command>;

// One per file in cli/. Keep this list in the order `swarmt --help` shows them.
void register_info(CLI::App& app, const GlobalOptions& globals, CommandList& commands);
void register_train(CLI::App& app, const GlobalOptions& globals, CommandList& commands);
void register_data(CLI::App& app, const GlobalOptions& globals, CommandList& commands);
void register_generate(CLI::App& app, const GlobalOptions& globals, CommandList& commands);
void register_serve(CLI::App& app, const GlobalOptions& globals, CommandList& commands);
void register_forward(CLI::App& app, const GlobalOptions& globals, CommandList& commands);
void register_bench(CLI::App& app, const GlobalOptions& globals, CommandList& commands);
void register_eval(CLI::App& app, const GlobalOptions& globals, CommandList& commands);
void register_model(CLI::App& app, const GlobalOptions& globals, CommandList& commands);
void register_armt(CLI::App& app, const GlobalOptions& globals, CommandList& commands);
// `swarmt armt lookup` (armt_lookup_command.cpp), added to the armt group by register_armt.
void register_armt_lookup(CLI::App& armt_group, CommandList& commands);
void register_tokenize(CLI::App& app, const GlobalOptions& globals, CommandList& commands);
void register_report(CLI::App& app, const GlobalOptions& globals, CommandList& commands);

}  // namespace swarmt::cli
