// A progress bar on stderr (only when stderr is a terminal, so logs and tests stay clean).
#pragma once

#include <cstddef>
#include <string>

namespace sinter::cli {

class ProgressBar {
 public:
  explicit ProgressBar(std::string label);
  void update(size_t done, size_t total);
  void finish();

 private:
  std::string label_;
  bool enabled_;
  int last_percent_ = -1;
};

}  // namespace sinter::cli
