#include "cli/flag_bounds.h"

#include "backend/backend.h"
#include "core/thread_pool.h"
#include "memory/kv_cache.h"

namespace sinter::cli {

CLI::Option* bounded(CLI::Option* option, int64_t min, int64_t max, std::string note) {
  const std::string name = option->get_name();
  const std::string range =
      std::to_string(min) + " and " + std::to_string(max) + (note.empty() ? "" : " (" + note + ")");
  return option->check(CLI::Validator(
      [name, min, max, range](std::string& text) -> std::string {
        int64_t value = 0;
        if (!CLI::detail::lexical_cast(text, value)) return {};  // not a number: the conversion says so
        if (value < min || value > max)
          throw FlagRangeError(name + " must be between " + range + ", got " + text);
        return {};
      },
      "[" + std::to_string(min) + ".." + std::to_string(max) + "]", "bounded"));
}

static_assert(kMaxParallelFlag == kMaxSequences);

int64_t max_threads_flag() { return max_thread_count(); }
int64_t max_context_flag() { return kMaxCacheCells; }

CLI::Option* add_threads_flag(CLI::App* app, int& threads, const std::string& what) {
  return bounded(app->add_option("-t,--threads", threads,
                                 what + " (0: all cores; at most 4 per hardware thread: " +
                                     std::to_string(max_threads_flag()) + " here)"),
                 0, max_threads_flag(), kThreadsNote);
}

CLI::Option* add_backend_flag(CLI::App* app, std::string& backend) {
  std::string names;
  for (const auto& name : backend_names()) names += (names.empty() ? "" : ", ") + name;
  return app->add_option("--backend", backend, "backend that runs the model: " + names + " (default cpu)")
      ->check(CLI::IsMember(backend_names()));
}

CLI::Option* add_context_flag(CLI::App* app, int32_t& n_ctx, const std::string& description) {
  return bounded(app->add_option("-c,--ctx", n_ctx, description), 0, max_context_flag(), kContextNote);
}

CLI::Option* add_state_checkpoints_flag(CLI::App* app, int64_t& mib) {
  return bounded(app->add_option("--state-checkpoints", mib,
                                 "MiB of host memory for the recurrent state's checkpoints, which let a "
                                 "prompt that shares a prefix resume instead of starting again (models "
                                 "with recurrent layers)"),
                 0, kMaxStateCheckpointsFlag, "0: eight sequence states per sequence, at most 1 GiB");
}

CLI::Option* add_batch_flag(CLI::App* app, int32_t& n_batch) {
  return bounded(app->add_option("-b,--batch-size", n_batch, "most tokens per forward pass"), 1,
                 max_context_flag());
}

}  // namespace sinter::cli
