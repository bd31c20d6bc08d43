// Temperature: logits / T, flattening (T > 1) or sharpening (T < 1) the distribution.
#include "sample/stages.h"

namespace sinter {

void apply_temperature(CandidateSet& set, float temperature) {
  if (temperature == 1.0f) return;
  for (Candidate& c : set.entries) c.logit /= temperature;
  // Division by a positive number keeps the logits non-increasing, so a sorted prefix stays.
}

}  // namespace sinter
