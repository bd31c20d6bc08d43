// The Prometheus histogram text.
#include "server/metrics.h"

#include <gtest/gtest.h>

namespace sinter::server {
namespace {

TEST(Histogram, CumulativeBucketsSumAndCount) {
  Histogram histogram({0.1, 1.0});
  for (double value : {0.05, 0.1, 0.5, 2.0}) histogram.add(value);
  std::string text;
  histogram.render(text, "latency_seconds", "model=\"m\"");
  EXPECT_EQ(text,
            "latency_seconds_bucket{model=\"m\",le=\"0.1\"} 2\n"
            "latency_seconds_bucket{model=\"m\",le=\"1\"} 3\n"
            "latency_seconds_bucket{model=\"m\",le=\"+Inf\"} 4\n"
            "latency_seconds_sum{model=\"m\"} 2.65\n"
            "latency_seconds_count{model=\"m\"} 4\n");
}

}  // namespace
}  // namespace sinter::server
