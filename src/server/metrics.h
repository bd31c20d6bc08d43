// The server's counters and the Prometheus text format of GET /metrics.
//
// Request counts by endpoint and status come from every answered request; token counts,
// prefix-cache hits and the latency histograms come from each model's scheduler (its counters
// and samples are taken once a second, before a model unloads, and on each scrape, so nothing is
// lost when a model unloads); active and queued sequences and KV cells are read at the scrape.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "core/memory_budget.h"
#include "server/model_manager.h"

namespace sinter::server {

class Histogram {
 public:
  explicit Histogram(std::vector<double> upper_bounds);
  void add(double value);
  // _bucket{le=...}, _sum and _count lines for `name` with `labels` (`model="x"`, or empty).
  void render(std::string& out, std::string_view name, std::string_view labels) const;

 private:
  std::vector<double> bounds_;
  std::vector<uint64_t> counts_;  // per bucket, not cumulative
  double sum_ = 0;
  uint64_t count_ = 0;
};

class ServerMetrics {
 public:
  void record_request(std::string_view endpoint, int status);
  void record_cancelled(std::string_view model);
  // Takes the scheduler's counters and latency samples into the server's totals.
  void absorb(ServedModel& model);
  // The Prometheus text exposition (version 0.0.4).
  // `request_memory`: the server's (core/memory_budget.h), or null.
  std::string render(ModelManager& manager, const MemoryPool* request_memory = nullptr);

 private:
  struct ModelCounters {
    int64_t requests_finished = 0;
    int64_t requests_cancelled = 0;
    int64_t prompt_tokens = 0;
    int64_t prompt_tokens_reused = 0;
    int64_t generated_tokens = 0;
    int64_t prefix_cache_hits = 0;
    int64_t forward_passes = 0;
    int64_t preemptions = 0;
    int64_t loads = 0;
    Histogram time_to_first_token{{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}};
    Histogram inter_token{{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5}};
  };
  SchedulerMetrics absorb_locked(ServedModel& model, SchedulerMetrics snapshot);

  std::mutex mutex_;
  std::map<std::pair<std::string, int>, uint64_t> requests_;  // (endpoint, status) -> count
  std::map<std::string, ModelCounters, std::less<>> models_;
};

}  // namespace sinter::server
