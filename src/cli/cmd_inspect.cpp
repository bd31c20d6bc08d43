// `sinter inspect`: diagnosis of a GGUF file before any payload is read.
//   sinter inspect --supported [--json]    what sinter supports
//   sinter inspect FILE [--json] [--ctx N] summary, config, defaults, bytes per type, memory
//   sinter inspect FILE --tensors          every tensor: name, type, shape, offset, bytes
//   sinter inspect FILE --schema           tensor names and shapes against the architecture
// Exits 1 when the file cannot be parsed or is not loadable (the reason is printed).
#include <cstdio>

#include "cli/command.h"
#include "cli/flag_bounds.h"
#include "cli/inspect_report.h"
#include "runtime/diagnosis.h"

namespace sinter::cli {
namespace {

struct InspectArgs {
  std::string file;
  bool json = false;
  bool supported = false;
  bool tensors = false;
  bool schema = false;
  int32_t n_ctx = 0;
  int64_t state_checkpoints_mib = 0;
  std::string backend = "cpu";
};

void print(const std::string& text) { std::fputs(text.c_str(), stdout); }
void print(const nlohmann::json& json) {
  print(json.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
}

int run(const InspectArgs& args) {
  if (args.supported) {
    args.json ? print(supported_json()) : print(supported_text());
    return 0;
  }
  if (args.file.empty()) return fail("give a GGUF file (or --supported)");
  auto file = GgufFile::open(args.file);
  if (!file) return fail(file.error().message());
  if (args.tensors) {
    args.json ? print(tensors_json(*file)) : print(tensors_text(*file));
    return 0;
  }
  DiagnosisOptions options;
  options.n_ctx = args.n_ctx;
  options.state_checkpoint_bytes = static_cast<size_t>(args.state_checkpoints_mib) << 20;
  options.backend = args.backend;
  const Diagnosis diagnosis = diagnose(*file, options);
  if (args.schema) {
    args.json ? print(schema_json(diagnosis, *file)) : print(schema_text(diagnosis, *file));
    return diagnosis.schema_issues.empty() ? 0 : 1;
  }
  args.json ? print(diagnosis_json(diagnosis, file->metadata())) : print(diagnosis_text(diagnosis));
  if (!diagnosis.loadable) {
    for (const auto& issue : diagnosis.issues) {
      if (issue.severity == "error") std::fprintf(stderr, "sinter: error: %s\n", issue.message.c_str());
    }
    return 1;
  }
  return 0;
}

CommandRun setup(CLI::App* app) {
  auto args = std::make_shared<InspectArgs>();
  app->add_option("file", args->file, "GGUF file (the first shard of a split model)");
  app->add_flag("--json", args->json, "machine-readable output");
  app->add_flag("--supported", args->supported,
                "list supported architectures, types, tokenizers and backends");
  app->add_flag("--tensors", args->tensors, "list every tensor");
  app->add_flag("--schema", args->schema, "check tensor names and shapes against the architecture");
  app->add_option("--ctx", args->n_ctx, "context length for the memory estimate");
  add_state_checkpoints_flag(app, args->state_checkpoints_mib);
  add_backend_flag(app, args->backend);
  return [args] { return run(*args); };
}

const CommandRegistration kInspect{"inspect", "Diagnose a GGUF file before loading it", setup};

}  // namespace
}  // namespace sinter::cli
