#include "server/metrics.h"

#include <cstdio>

namespace sinter::server {
namespace {

std::string format_number(double value) {
  char text[64];
  std::snprintf(text, sizeof(text), "%.9g", value);
  return text;
}

// A label value with \, " and newline escaped.
std::string escape_label(std::string_view value) {
  std::string out;
  for (char c : value) {
    if (c == '\\' || c == '"') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

void header(std::string& out, std::string_view name, std::string_view type, std::string_view help) {
  out.append("# HELP ").append(name).append(" ").append(help).append("\n");
  out.append("# TYPE ").append(name).append(" ").append(type).append("\n");
}

void sample(std::string& out, std::string_view name, std::string_view labels, double value) {
  out.append(name);
  if (!labels.empty()) out.append("{").append(labels).append("}");
  out.append(" ").append(format_number(value)).append("\n");
}

std::string model_label(std::string_view model) { return "model=\"" + escape_label(model) + "\""; }

}  // namespace

Histogram::Histogram(std::vector<double> upper_bounds)
    : bounds_(std::move(upper_bounds)), counts_(bounds_.size() + 1, 0) {}

void Histogram::add(double value) {
  size_t bucket = 0;
  while (bucket < bounds_.size() && value > bounds_[bucket]) ++bucket;
  ++counts_[bucket];
  sum_ += value;
  ++count_;
}

void Histogram::render(std::string& out, std::string_view name, std::string_view labels) const {
  const std::string prefix = labels.empty() ? std::string() : std::string(labels) + ",";
  uint64_t cumulative = 0;
  for (size_t i = 0; i <= bounds_.size(); ++i) {
    cumulative += counts_[i];
    const std::string le = i < bounds_.size() ? format_number(bounds_[i]) : "+Inf";
    sample(out, std::string(name) + "_bucket", prefix + "le=\"" + le + "\"", static_cast<double>(cumulative));
  }
  sample(out, std::string(name) + "_sum", labels, sum_);
  sample(out, std::string(name) + "_count", labels, static_cast<double>(count_));
}

void ServerMetrics::record_request(std::string_view endpoint, int status) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++requests_[{std::string(endpoint), status}];
}

void ServerMetrics::record_cancelled(std::string_view model) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++models_[std::string(model)].requests_cancelled;
}

void ServerMetrics::absorb(ServedModel& model) {
  // An embedding model has no scheduler: only its load counts.
  SchedulerMetrics snapshot = model.scheduler ? model.scheduler->take_metrics() : SchedulerMetrics{};
  std::lock_guard<std::mutex> lock(mutex_);
  absorb_locked(model, std::move(snapshot));
}

SchedulerMetrics ServerMetrics::absorb_locked(ServedModel& model, SchedulerMetrics snapshot) {
  ModelCounters& counters = models_[model.file.name];
  SchedulerMetrics& last = model.absorbed;
  if (!model.load_counted) {
    model.load_counted = true;
    ++counters.loads;
  }
  counters.requests_finished += snapshot.requests_finished - last.requests_finished;
  counters.prompt_tokens += snapshot.prompt_tokens - last.prompt_tokens;
  counters.prompt_tokens_reused += snapshot.prompt_tokens_reused - last.prompt_tokens_reused;
  counters.generated_tokens += snapshot.generated_tokens - last.generated_tokens;
  counters.prefix_cache_hits += snapshot.prefix_cache_hits - last.prefix_cache_hits;
  counters.forward_passes += snapshot.forward_passes - last.forward_passes;
  counters.preemptions += snapshot.preemptions - last.preemptions;
  for (double seconds : snapshot.time_to_first_token_seconds) counters.time_to_first_token.add(seconds);
  for (double seconds : snapshot.inter_token_seconds) counters.inter_token.add(seconds);
  snapshot.time_to_first_token_seconds.clear();
  snapshot.inter_token_seconds.clear();
  last = snapshot;
  return snapshot;
}

std::string ServerMetrics::render(ModelManager& manager, const MemoryPool* request_memory) {
  struct Gauges {
    std::string model;
    SchedulerMetrics now;
    int32_t parallel = 0;
  };
  std::vector<Gauges> gauges;
  manager.for_each_loaded([&](ServedModel& model) {
    SchedulerMetrics snapshot = model.scheduler ? model.scheduler->take_metrics() : SchedulerMetrics{};
    std::lock_guard<std::mutex> lock(mutex_);
    gauges.push_back({model.file.name, absorb_locked(model, std::move(snapshot)),
                      model.scheduler ? model.scheduler->parallel() : 1});
  });

  std::lock_guard<std::mutex> lock(mutex_);
  std::string out;
  header(out, "sinter_http_requests_total", "counter", "HTTP requests answered, by endpoint and status.");
  for (const auto& [key, count] : requests_) {
    sample(out, "sinter_http_requests_total",
           "endpoint=\"" + escape_label(key.first) + "\",status=\"" + std::to_string(key.second) + "\"",
           static_cast<double>(count));
  }
  const auto counter = [&](const char* name, const char* help, int64_t ModelCounters::*field) {
    header(out, name, "counter", help);
    for (const auto& [model, counters] : models_)
      sample(out, name, model_label(model), static_cast<double>(counters.*field));
  };
  counter("sinter_requests_finished_total", "Generation requests finished (completed, stopped or cancelled).",
          &ModelCounters::requests_finished);
  counter("sinter_requests_cancelled_total", "Generation requests cancelled because the client went away.",
          &ModelCounters::requests_cancelled);
  counter("sinter_prompt_tokens_total", "Prompt tokens of finished requests.", &ModelCounters::prompt_tokens);
  counter("sinter_prompt_tokens_reused_total",
          "Prompt tokens taken from the prefix cache instead of computed.",
          &ModelCounters::prompt_tokens_reused);
  counter("sinter_generated_tokens_total", "Tokens generated.", &ModelCounters::generated_tokens);
  counter("sinter_prefix_cache_hits_total", "Requests that reused a cached prompt prefix.",
          &ModelCounters::prefix_cache_hits);
  counter("sinter_forward_passes_total", "Forward passes (batches) run.", &ModelCounters::forward_passes);
  counter("sinter_preemptions_total", "Sequences suspended to give their slot to another client.",
          &ModelCounters::preemptions);
  counter("sinter_model_loads_total", "Times a model was loaded.", &ModelCounters::loads);

  header(out, "sinter_time_to_first_token_seconds", "histogram",
         "Time from a request's arrival at the scheduler to its first generated token.");
  for (const auto& [model, counters] : models_) {
    counters.time_to_first_token.render(out, "sinter_time_to_first_token_seconds", model_label(model));
  }
  header(out, "sinter_inter_token_latency_seconds", "histogram",
         "Time between consecutive tokens of a request.");
  for (const auto& [model, counters] : models_) {
    counters.inter_token.render(out, "sinter_inter_token_latency_seconds", model_label(model));
  }

  const auto gauge = [&](const char* name, const char* help, auto value_of) {
    header(out, name, "gauge", help);
    for (const Gauges& g : gauges) sample(out, name, model_label(g.model), static_cast<double>(value_of(g)));
  };
  header(out, "sinter_models_loaded", "gauge", "Models loaded now.");
  sample(out, "sinter_models_loaded", "", static_cast<double>(gauges.size()));
  gauge("sinter_active_sequences", "Sequences being generated now.",
        [](const Gauges& g) { return g.now.active; });
  gauge("sinter_queued_requests", "Requests waiting for a free sequence.",
        [](const Gauges& g) { return g.now.queued; });
  gauge("sinter_parallel_sequences", "Sequences a model serves at once (--parallel).",
        [](const Gauges& g) { return g.parallel; });
  gauge("sinter_kv_cache_cells_used",
        "KV cache cells holding tokens (including cached prefixes of idle slots).",
        [](const Gauges& g) { return g.now.cache_cells_used; });
  gauge("sinter_kv_cache_cells_free", "KV cache cells free.",
        [](const Gauges& g) { return g.now.cache_cells_total - g.now.cache_cells_used; });
  gauge("sinter_recurrent_state_bytes",
        "Bytes of the recurrent layers' state and its checkpoints (models with recurrent layers).",
        [](const Gauges& g) { return static_cast<double>(g.now.state_bytes); });
  if (request_memory != nullptr) {
    header(out, "sinter_request_memory_bytes", "gauge",
           "Memory requests hold now beyond the models (bodies, parsed JSON, templates, answers).");
    sample(out, "sinter_request_memory_bytes", "", static_cast<double>(request_memory->used()));
    header(out, "sinter_request_memory_limit_bytes", "gauge",
           "The most requests may hold together (--request-memory).");
    sample(out, "sinter_request_memory_limit_bytes", "", static_cast<double>(request_memory->capacity()));
    header(out, "sinter_request_memory_peak_bytes", "gauge",
           "The most requests held together since the start.");
    sample(out, "sinter_request_memory_peak_bytes", "", static_cast<double>(request_memory->peak()));
    header(out, "sinter_request_memory_refusals_total", "counter",
           "Requests refused (503) because the request memory was in use.");
    sample(out, "sinter_request_memory_refusals_total", "", static_cast<double>(request_memory->refusals()));
  }
  return out;
}

}  // namespace sinter::server
