#include "cli/progress.h"

#include <unistd.h>

#include <cstdio>

namespace sinter::cli {

ProgressBar::ProgressBar(std::string label) : label_(std::move(label)), enabled_(isatty(STDERR_FILENO) != 0) {}

void ProgressBar::update(size_t done, size_t total) {
  if (!enabled_ || total == 0) return;
  const int percent = static_cast<int>(done * 100 / total);
  if (percent == last_percent_) return;
  last_percent_ = percent;
  constexpr int kWidth = 40;
  const int filled = percent * kWidth / 100;
  std::fprintf(stderr, "\r%s [%.*s%*s] %3d%% (%zu/%zu)", label_.c_str(), filled,
               "########################################", kWidth - filled, "", percent, done, total);
  std::fflush(stderr);
}

void ProgressBar::finish() {
  if (enabled_ && last_percent_ >= 0) std::fprintf(stderr, "\n");
}

}  // namespace sinter::cli
