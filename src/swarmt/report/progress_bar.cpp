#include "swarmt/report/progress_bar.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>

namespace swarmt {

std::string format_progress_value(double value) {
  char buf[64];
  double magnitude = std::fabs(value);
  if (value == 0.0) return "0";
  if (!std::isfinite(value)) {
    std::snprintf(buf, sizeof(buf), "%g", value);
  } else if (magnitude < 1e-3 || magnitude >= 1e6) {
    std::snprintf(buf, sizeof(buf), "%.1e", value);
  } else {
    std::snprintf(buf, sizeof(buf), "%.4g", value);
  }
  return buf;
}

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "--:--";
  auto total = static_cast<int64_t>(std::llround(seconds));
  int64_t h = total / 3600, m = (total % 3600) / 60, s = total % 60;
  char buf[64];
  if (h > 0) {
    std::snprintf(buf, sizeof(buf), "%lld:%02lld:%02lld", static_cast<long long>(h), static_cast<long long>(m),
                  static_cast<long long>(s));
  } else {
    std::snprintf(buf, sizeof(buf), "%02lld:%02lld", static_cast<long long>(m), static_cast<long long>(s));
  }
  return buf;
}

ProgressBar::ProgressBar(int64_t total, std::string label, ProgressBarOptions options)
    : total_(total), label_(std::move(label)), options_(std::move(options)) {
  if (!options_.out) options_.out = &std::cerr;
  interactive_ = options_.interactive.has_value() ? *options_.interactive : (isatty(STDERR_FILENO) == 1);
  done_ = options_.initial;
  start_s_ = now();
}

ProgressBar::~ProgressBar() {
  try {
    finish();
  } catch (...) {
    // A destructor must not throw; losing the last progress line is acceptable.
  }
}

double ProgressBar::now() const {
  if (options_.clock) return options_.clock();
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

std::string ProgressBar::render_line() const {
  std::string line = label_.empty() ? "" : label_ + "  ";
  line += std::to_string(done_);
  if (total_ > 0) {
    line += "/" + std::to_string(total_);
    double fraction = std::clamp(static_cast<double>(done_) / static_cast<double>(total_), 0.0, 1.0);
    int width = std::max(1, options_.bar_width);
    int filled = static_cast<int>(fraction * width);
    std::string bar(static_cast<size_t>(width), ' ');
    for (int i = 0; i < filled; ++i) bar[static_cast<size_t>(i)] = '=';
    if (filled < width) bar[static_cast<size_t>(filled)] = '>';
    char pct[16];
    std::snprintf(pct, sizeof(pct), "%3d%%", static_cast<int>(fraction * 100.0));
    line += " [" + bar + "] " + pct;
  }
  for (const auto& [name, value] : fields_) line += " | " + name + " " + value;

  double elapsed = now() - start_s_;
  double rate = elapsed > 0 ? static_cast<double>(std::max<int64_t>(done_ - options_.initial, 0)) / elapsed : 0.0;
  line += " | " + format_progress_value(rate) + " " + options_.unit + "/s";
  if (total_ > 0) {
    if (finished_ || done_ >= total_) {
      line += " | " + format_duration(elapsed);
    } else {
      double eta = rate > 0 ? static_cast<double>(total_ - done_) / rate : -1.0;
      line += " | ETA " + format_duration(eta);
    }
  } else {
    line += " | " + format_duration(elapsed);
  }
  return line;
}

void ProgressBar::update(int64_t done, const ProgressFields& fields) {
  if (finished_) return;
  done_ = done;
  fields_ = fields;
  if (options_.quiet) return;
  double t = now();
  double interval = interactive_ ? options_.redraw_interval_s : options_.plain_interval_s;
  if (t - last_print_s_ < interval) return;
  last_print_s_ = t;
  emit(/*final_line=*/false);
}

void ProgressBar::finish() {
  if (finished_) return;
  finished_ = true;
  if (options_.quiet) return;
  emit(/*final_line=*/true);
}

void ProgressBar::emit(bool final_line) {
  std::ostream& out = *options_.out;
  std::string line = render_line();
  if (interactive_) {
    // "\r" returns to the line start; ESC[K clears what a longer previous line left behind.
    out << '\r' << line << "\x1b[K";
    if (final_line) out << '\n';
  } else {
    out << line << '\n';
  }
  out.flush();
}

}  // namespace swarmt
