// Side-by-side comparison of evaluation runs (`swarmt eval compare RUN_DIR... --out DIR`).
//
// Each run directory holds a report written by write_eval_report (summary.json, or results.json when
// summary.json is absent). The comparison writes into the output directory:
//   compare.md    one Markdown table: a row per (variant, length) and per length average, a column per run;
//   compare.svg   mean score (average over variants) vs context length, one line per run;
//   compare.json  the same numbers, machine-readable.
#pragma once

#include <string>
#include <vector>

#include "swarmt/core/json.h"
#include "swarmt/eval/report.h"

namespace swarmt::eval {

struct RunSummary {
  std::string name;        // metadata.run_name, else the directory's base name (made unique)
  std::string directory;
  Json metadata;
  EvalAggregates aggregates;
};

// Reads one run directory. BadInput naming the file if neither summary.json nor results.json is
// there, or if the file is not an evaluation report.
RunSummary read_run_summary(const std::string& run_directory);

struct CompareOptions {
  std::string title = "Run comparison";
};

// The Markdown table (also printed by the CLI).
std::string comparison_table(const std::vector<RunSummary>& runs);

// Reads the runs and writes compare.md, compare.svg and compare.json into `out_directory`; returns the
// runs read (names made unique: a second run called "base" becomes "base (2)").
std::vector<RunSummary> write_comparison(const std::vector<std::string>& run_directories,
                                         const std::string& out_directory, const CompareOptions& options = {});

}  // namespace swarmt::eval
