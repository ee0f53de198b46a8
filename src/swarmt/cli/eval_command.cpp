// `swarmt eval`: long-context evaluations and their reports.
//   swarmt eval compare RUN_DIR... --out DIR [--title TEXT]
#include "swarmt/cli/eval_command.h"

#include <iostream>
#include <memory>

#include "swarmt/core/run_lock.h"
#include "swarmt/eval/compare.h"

namespace swarmt::cli {

void register_eval(CLI::App& app, const GlobalOptions& globals, CommandList& commands) {
  CLI::App* group = app.add_subcommand("eval", "Evaluate long-context memory and compare evaluation runs");
  group->require_subcommand(1);
  register_eval_niah(*group, globals, commands);
  register_eval_passkey(*group, globals, commands);
  register_eval_mqar(*group, globals, commands);
  register_eval_ppl(*group, globals, commands);
  register_eval_qa(*group, globals, commands);
  register_eval_recall(*group, globals, commands);
  register_eval_compare(*group, globals, commands);
}

namespace {

struct CompareOptionsCli {
  std::vector<std::string> run_dirs;
  std::string out_dir;
  std::string title = "Run comparison";
};

}  // namespace

void register_eval_compare(CLI::App& eval_group, const GlobalOptions& globals, CommandList& commands) {
  auto opts = std::make_shared<CompareOptionsCli>();
  CLI::App* cmd = eval_group.add_subcommand(
      "compare", "Put several evaluation runs side by side: compare.md (table), compare.svg (plot), compare.json");
  cmd->add_option("run_dirs", opts->run_dirs, "Evaluation run directories (each with summary.json or results.json)")
      ->required();
  cmd->add_option("--out", opts->out_dir, "Output directory (created if needed)")->required();
  cmd->add_option("--title", opts->title, "Title of the table and the plot");
  const GlobalOptions* g = &globals;
  commands.push_back({cmd, [opts, g]() -> int {
                        eval::CompareOptions options;
                        options.title = opts->title;
                        const RunLock lock = RunLock::acquire(opts->out_dir, "--out");
                        auto runs = eval::write_comparison(opts->run_dirs, opts->out_dir, options);
                        std::cout << eval::comparison_table(runs);
                        if (!g->quiet) {
                          std::cerr << "wrote " << opts->out_dir << "/compare.md, compare.svg, compare.json ("
                                    << runs.size() << " runs)" << std::endl;
                        }
                        return 0;
                      }});
}

}  // namespace swarmt::cli
