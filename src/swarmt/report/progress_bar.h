// One-line progress display for training and evaluation loops.
//
//   ProgressBar bar(num_steps, "train");
//   for (...) { ...; bar.update(step + 1, {{"loss", format_progress_value(loss)}, {"lr", "3e-4"}}); }
//   bar.finish();
//
// renders, on stderr,
//
//   train  420/1000 [=========>           ] 42% | loss 2.314 | lr 3e-4 | 12.5 it/s | ETA 00:46
//
// On a terminal the line is redrawn in place ("\r" + clear-to-end) at most every `redraw_interval_s`
// (default 0.1 s, ~10 redraws/s), so a fast loop does not spend its time printing. When stderr is not a
// terminal (a log file, CI) a plain line is printed at most every `plain_interval_s` seconds, so logs stay
// short. Quiet mode prints nothing. finish() always prints the final state once (unless quiet).
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace swarmt {

// User fields shown after the bar, in order: {"loss", "2.314"}, {"window", "128"}, ...
using ProgressFields = std::vector<std::pair<std::string, std::string>>;

struct ProgressBarOptions {
  bool quiet = false;                   // print nothing at all
  std::ostream* out = nullptr;          // nullptr: std::cerr
  std::optional<bool> interactive;      // redraw in place; default: whether stderr is a terminal
  double redraw_interval_s = 0.1;       // terminal: minimum time between redraws
  double plain_interval_s = 10.0;       // not a terminal: minimum time between printed lines
  int bar_width = 24;                   // cells of the [====>   ] bar
  std::string unit = "it";              // rate unit: "12.5 it/s"
  int64_t initial = 0;                  // units done before this run (a resumed training's first step), as
                                        // tqdm's `initial`: shown in the count, left out of the rate and ETA
  std::function<double()> clock;        // seconds on a monotonic clock; default std::chrono::steady_clock
};

class ProgressBar {
 public:
  // total <= 0 means unknown: no bar, percentage or ETA, only the count and the rate.
  ProgressBar(int64_t total, std::string label, ProgressBarOptions options = {});
  ~ProgressBar();  // calls finish() if it was not called
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  // Records that `done` units are complete, with the current user fields; prints if it is time to.
  void update(int64_t done, const ProgressFields& fields = {});
  // Prints the final line (and a newline on a terminal). Further updates are ignored.
  void finish();

  // The line as it would be printed now (no "\r", no newline). Exposed for tests and for callers that
  // log the progress elsewhere.
  std::string render_line() const;

  int64_t done() const { return done_; }
  int64_t total() const { return total_; }

 private:
  void emit(bool final_line);
  double now() const;

  int64_t total_;
  std::string label_;
  ProgressBarOptions options_;
  bool interactive_ = false;
  bool finished_ = false;
  int64_t done_ = 0;
  ProgressFields fields_;
  double start_s_ = 0;
  double last_print_s_ = -1e300;
};

// Compact number for a field: 4 significant digits, scientific below 1e-3 or from 1e6 ("2.314",
// "0.0123", "3.0e-04", "1.2e+06").
std::string format_progress_value(double value);

// Durations as "MM:SS", or "H:MM:SS" from one hour; "--:--" when unknown (negative or not finite).
std::string format_duration(double seconds);

}  // namespace swarmt
