// `sinter quantize IN OUT TYPE [--threads N] [--pure] [--dry-run]`: a GGUF model quantized to a
// type or a llama.cpp mixture (Q4_K_M, ...), with per-tensor types chosen as llama-quantize
// chooses them (see docs/QUANTIZE.md).
#include <cstdio>
#include <memory>

#include "cli/command.h"
#include "cli/flag_bounds.h"
#include "cli/progress.h"
#include "core/thread_pool.h"
#include "model/quantize/quantize_plan.h"
#include "model/quantize/quantize_writer.h"

namespace sinter::cli {
namespace {

struct QuantizeArgs {
  std::string input;
  std::string output;
  std::string type;
  int threads = 0;
  bool pure = false;
  bool dry_run = false;
};

std::string mebibytes(uint64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  return text;
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

// The plan as a table on stdout: one line per tensor, then the sizes.
void print_plan(const QuantizePlan& plan) {
  for (const TensorPlan& t : plan.tensors) {
    std::printf(
        "%-40s %-20s %-12s %-8s -> %-8s%s\n", t.name.c_str(), shape_text(t.shape).c_str(),
        std::string(weight_role_name(t.role)).c_str(), std::string(dtype_name(t.source_type)).c_str(),
        std::string(dtype_name(t.target_type)).c_str(),
        t.fell_back() ? (" (" + std::string(dtype_name(t.chosen_type)) + " does not fit)").c_str() : "");
  }
  std::printf("%s: %s -> %s\n", std::string(mixture(plan.mixture).name).c_str(),
              mebibytes(plan.source_bytes()).c_str(), mebibytes(plan.target_bytes()).c_str());
}

int run(const QuantizeArgs& args) {
  const auto mixture_id = mixture_from_name(args.type);
  if (!mixture_id) {
    return fail("unknown quantization type '" + args.type + "'; choose one of " + mixture_names());
  }
  auto file = GgufFile::open(args.input);
  if (!file) return fail("cannot read " + args.input + ": " + file.error().message());
  auto plan = plan_quantization(*file, QuantizeOptions{*mixture_id, args.pure});
  if (!plan) return fail(args.input + ": " + plan.error().message());

  for (const std::string& note : plan->assumptions) std::fprintf(stderr, "sinter: note: %s\n", note.c_str());
  for (const std::string& warning : plan->warnings())
    std::fprintf(stderr, "sinter: warning: %s\n", warning.c_str());
  if (args.dry_run) {
    print_plan(*plan);
    return 0;
  }

  ThreadPool pool(args.threads > 0 ? args.threads : default_thread_count());
  ProgressBar bar("quantize (MiB)");
  const auto status = write_quantized_model(*file, *plan, args.output, &pool, [&](size_t done, size_t total) {
    constexpr size_t kMiB = size_t{1} << 20;
    bar.update((done + kMiB - 1) / kMiB, (total + kMiB - 1) / kMiB);
  });
  bar.finish();
  if (!status) return fail("cannot write " + args.output + ": " + status.error().message());

  size_t converted = 0;
  for (const TensorPlan& t : plan->tensors) converted += t.converted();
  std::fprintf(stderr, "sinter: wrote %s (%s): %zu tensors, %zu converted, %s -> %s\n", args.output.c_str(),
               std::string(mixture(*mixture_id).name).c_str(), plan->tensors.size(), converted,
               mebibytes(plan->source_bytes()).c_str(), mebibytes(plan->target_bytes()).c_str());
  return 0;
}

CommandRun setup(CLI::App* app) {
  auto args = std::make_shared<QuantizeArgs>();
  app->add_option("input", args->input, "the GGUF model to quantize")->required();
  app->add_option("output", args->output, "the GGUF file to write")->required();
  app->add_option("type", args->type, "type or mixture: " + mixture_names())->required();
  add_threads_flag(app, args->threads);
  app->add_flag("--pure", args->pure,
                "every quantized tensor gets the type itself (no per-tensor mixture rules)");
  app->add_flag("--dry-run", args->dry_run, "print each tensor's type and the sizes; write nothing");
  return [args] { return run(*args); };
}

const CommandRegistration kQuantize{"quantize", "Quantize a GGUF model (Q4_K_M, Q8_0, F16, ...)", setup};

}  // namespace
}  // namespace sinter::cli
