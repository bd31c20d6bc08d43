// `sinter bench -m MODEL [-p 512] [-n 128] [-r 3] [-t 2] [-d DEPTH] [--output text|json|md]`:
// prompt processing (pp) and generation (tg) speed in tokens per second, like llama-bench.
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "cli/common.h"
#include "cli/flag_bounds.h"
#include "core/cpu_features.h"
#include "runtime/bench.h"

namespace sinter::cli {
namespace {

constexpr int64_t kMaxRepetitions = 1000;

struct BenchArgs {
  std::string model;
  BenchOptions bench;
  std::string backend = "cpu";
  int threads = 0;
  int32_t n_batch = 512;
  std::string output = "text";
  std::string kv_type = "f16";
};

// The kernel family the CPU backend runs with (SINTER_ISA may cap it), not merely what the CPU has.
std::string isa_name() { return isa_level_name(selected_isa_level()); }

// "q4_0 (113), f32 (33)": tensor types by count, most common first.
std::string type_summary(const GgufFile& file) {
  std::map<std::string, int> counts;
  for (const auto& t : file.tensors()) ++counts[std::string(dtype_name(t.type))];
  std::vector<std::pair<int, std::string>> sorted;
  for (const auto& [name, count] : counts) sorted.emplace_back(-count, name);
  std::sort(sorted.begin(), sorted.end());
  std::string out;
  for (const auto& [count, name] : sorted)
    out += (out.empty() ? "" : ", ") + name + " (" + std::to_string(-count) + ")";
  return out;
}

int run(const BenchArgs& args) {
  if (args.output != "text" && args.output != "json" && args.output != "md") {
    return fail("--output must be text, json or md");
  }
  auto kv_type = parse_kv_type(args.kv_type);
  if (!kv_type) return fail(kv_type.error().message());
  auto loaded = LoadedModel::load(args.model, LoadOptions{args.backend, args.threads});
  if (!loaded) return fail(loaded.error().message());
  ContextOptions options;
  options.n_ctx = args.bench.depth + std::max(args.bench.prompt_tokens, args.bench.generate_tokens);
  options.n_batch = args.n_batch;
  options.kv_type = *kv_type;
  auto context = Context::create(*loaded, options);
  if (!context) return fail(context.error().message());
  auto result = run_bench(**context, args.bench);
  if (!result) return fail(result.error().message());

  const int threads = (*loaded)->backend().threads();
  const double bandwidth = static_cast<double>(result->weight_bytes_per_token) * result->tg_median / 1e9;
  const std::string types = type_summary((*loaded)->file());
  if (args.output == "json") {
    nlohmann::json json = {
        {"model", args.model},
        {"architecture", (*loaded)->model().shape().architecture},
        {"types", types},
        {"threads", threads},
        {"isa", isa_name()},
        {"pp_tokens", args.bench.prompt_tokens},
        {"tg_tokens", args.bench.generate_tokens},
        {"depth", args.bench.depth},
        {"repetitions", args.bench.repetitions},
        {"pp_tps", result->pp_median},
        {"pp_tps_stddev", result->pp_stddev},
        {"pp_tps_runs", result->pp_tps},
        {"tg_tps", result->tg_median},
        {"tg_tps_stddev", result->tg_stddev},
        {"tg_tps_runs", result->tg_tps},
        {"weight_bytes_per_token", result->weight_bytes_per_token},
        {"bandwidth_gb_per_s", bandwidth},
    };
    std::printf("%s\n", json.dump(2).c_str());
    return 0;
  }
  const char* row_format = args.output == "md" ? "| %s | %s | %d | %s | %s | %.2f ± %.2f |\n"
                                               : "%-40s %-28s t=%-2d %-12s %-10s %8.2f ± %.2f t/s\n";
  if (args.output == "md") {
    std::printf("| model | types | threads | isa | test | t/s |\n|---|---|---|---|---|---|\n");
  }
  const std::string depth = args.bench.depth > 0 ? " @ d" + std::to_string(args.bench.depth) : "";
  if (args.bench.prompt_tokens > 0) {
    std::printf(row_format, args.model.c_str(), types.c_str(), threads, isa_name().c_str(),
                ("pp" + std::to_string(args.bench.prompt_tokens) + depth).c_str(), result->pp_median,
                result->pp_stddev);
  }
  if (args.bench.generate_tokens > 0) {
    std::printf(row_format, args.model.c_str(), types.c_str(), threads, isa_name().c_str(),
                ("tg" + std::to_string(args.bench.generate_tokens) + depth).c_str(), result->tg_median,
                result->tg_stddev);
    std::printf("%sweights read per token: %.1f MB; implied bandwidth %.1f GB/s\n",
                args.output == "md" ? "\n" : "", static_cast<double>(result->weight_bytes_per_token) / 1e6,
                bandwidth);
  }
  return 0;
}

CommandRun setup(CLI::App* app) {
  auto args = std::make_shared<BenchArgs>();
  app->add_option("-m,--model", args->model, "GGUF model file")->required();
  // The context is depth + max(prompt, generated) tokens: Context::create refuses more than it holds.
  bounded(app->add_option("-p,--n-prompt", args->bench.prompt_tokens, "prompt tokens (pp; 0 skips)"), 0,
          max_context_flag());
  bounded(app->add_option("-n,--n-gen", args->bench.generate_tokens, "generated tokens (tg; 0 skips)"), 0,
          max_context_flag());
  bounded(
      app->add_option("-r,--repetitions", args->bench.repetitions, "measured repetitions after one warm-up"),
      1, kMaxRepetitions);
  bounded(app->add_option("-d,--depth", args->bench.depth, "tokens already in the cache"), 0,
          max_context_flag());
  add_backend_flag(app, args->backend);
  add_threads_flag(app, args->threads);
  add_batch_flag(app, args->n_batch);
  app->add_option("--kv-type", args->kv_type, "KV cache type");
  app->add_option("-o,--output", args->output, "text, json or md");
  return [args] { return run(*args); };
}

const CommandRegistration kBench{"bench", "Measure prompt processing and generation speed", setup};

}  // namespace
}  // namespace sinter::cli
