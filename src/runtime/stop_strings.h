// Stop strings over streamed text: text is released only when it cannot be the start of a stop
// string; a stop string itself is never released.
//
//   StopMatcher stops({"\n\n", "User:"});
//   out += stops.push(piece);  // text that is safe to show now
//   if (stops.stopped()) ...   // a stop string was seen: generation ends
//   out += stops.flush();      // at the end: what was held back
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace sinter {

class StopMatcher {
 public:
  explicit StopMatcher(std::vector<std::string> stop_strings = {});

  // Adds text; returns the part that can be released. After a stop string is seen, returns
  // the text before it and ignores everything else.
  std::string push(std::string_view text);
  // Releases what was held back (end of generation without a stop string).
  std::string flush();

  bool stopped() const { return stopped_; }
  const std::string& matched() const { return matched_; }  // the stop string that ended it

 private:
  // Length of the longest suffix of held_ that is a proper prefix of a stop string.
  size_t partial_match_length() const;

  std::vector<std::string> stops_;
  std::string held_;
  bool stopped_ = false;
  std::string matched_;
};

}  // namespace sinter
