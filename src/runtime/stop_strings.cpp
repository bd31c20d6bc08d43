#include "runtime/stop_strings.h"

#include <algorithm>

namespace sinter {

StopMatcher::StopMatcher(std::vector<std::string> stop_strings) : stops_(std::move(stop_strings)) {
  stops_.erase(std::remove(stops_.begin(), stops_.end(), std::string()), stops_.end());
}

std::string StopMatcher::push(std::string_view text) {
  if (stopped_) return {};
  held_.append(text);
  // The earliest complete stop string ends the text there.
  size_t first = std::string::npos;
  for (const auto& stop : stops_) {
    const size_t at = held_.find(stop);
    if (at != std::string::npos && (first == std::string::npos || at < first)) {
      first = at;
      matched_ = stop;
    }
  }
  if (first != std::string::npos) {
    stopped_ = true;
    std::string out = held_.substr(0, first);
    held_.clear();
    return out;
  }
  const size_t keep = partial_match_length();
  std::string out = held_.substr(0, held_.size() - keep);
  held_.erase(0, held_.size() - keep);
  return out;
}

std::string StopMatcher::flush() {
  if (stopped_) return {};
  std::string out;
  out.swap(held_);
  return out;
}

size_t StopMatcher::partial_match_length() const {
  size_t longest = 0;
  for (const auto& stop : stops_) {
    const size_t limit = std::min(stop.size() - 1, held_.size());
    for (size_t n = limit; n > longest; --n) {
      if (held_.compare(held_.size() - n, n, stop, 0, n) == 0) {
        longest = n;
        break;
      }
    }
  }
  return longest;
}

}  // namespace sinter
