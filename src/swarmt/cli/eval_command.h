// `swarmt eval ...`: the evaluation command group.
//
// register_eval adds the `eval` group and calls one register_eval_* function per evaluation, each
// defined in its own file (eval_<name>_command.cpp, or here for compare). To add `swarmt eval niah`:
// declare register_eval_niah below, define it in cli/eval_niah_command.cpp, and add one call in
// register_eval (eval_command.cpp).
#pragma once

#include "swarmt/cli/command.h"

namespace swarmt::cli {

// `swarmt eval compare RUN_DIR... --out DIR [--title TEXT]`: several runs side by side (one Markdown
// table, one plot with a line per run).
void register_eval_compare(CLI::App& eval_group, const GlobalOptions& globals, CommandList& commands);

// Evaluations of a model directory (eval_model_commands.cpp): RULER NIAH, passkey, MQAR, loss by position,
// long-document QA, associative recall by distance.
void register_eval_niah(CLI::App& eval_group, const GlobalOptions& globals, CommandList& commands);
void register_eval_passkey(CLI::App& eval_group, const GlobalOptions& globals, CommandList& commands);
void register_eval_mqar(CLI::App& eval_group, const GlobalOptions& globals, CommandList& commands);
void register_eval_ppl(CLI::App& eval_group, const GlobalOptions& globals, CommandList& commands);
void register_eval_qa(CLI::App& eval_group, const GlobalOptions& globals, CommandList& commands);
void register_eval_recall(CLI::App& eval_group, const GlobalOptions& globals, CommandList& commands);

}  // namespace swarmt::cli
