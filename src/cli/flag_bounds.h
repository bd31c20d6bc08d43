// Range checks of numeric flags, declared with the flag so that every command gets the same
// rules and the same message:
//
//   bounded(app->add_option("-t,--threads", threads, "threads"), 0, max_thread_count(), "0: all cores");
//
// A value outside its range stops parsing, before anything is loaded, with one message form and
// exit status 1, like every other bad value the commands refuse:
//
//   sinter: error: --ctx must be between 0 and 16777216 (0: the model's, at most 4096), got 2147483647
//
// A value that is not a number at all is left to CLI11's conversion error.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>

namespace sinter::cli {

// Thrown while parsing; main() prints it as a usage error.
class FlagRangeError : public CLI::ParseError {
 public:
  explicit FlagRangeError(std::string message) : CLI::ParseError("FlagRangeError", std::move(message), 1) {}
};

CLI::Option* bounded(CLI::Option* option, int64_t min, int64_t max, std::string note = {});

// The limits several commands share.
int64_t max_threads_flag();                          // core/thread_pool.h: max_thread_count()
int64_t max_context_flag();                          // memory/kv_cache.h: kMaxCacheCells (2^24 tokens)
constexpr int64_t kMaxParallelFlag = 64;             // memory/kv_cache.h: kMaxSequences
constexpr int64_t kMaxQueueFlag = int64_t{1} << 20;  // more waiting requests is a mistake
constexpr int64_t kMaxBodyFlag = int64_t{1} << 30;   // so is a request body over 1 GiB
constexpr const char* kThreadsNote = "0: all cores; at most 4 per hardware thread";
constexpr const char* kContextNote = "0: the model's, at most 4096";

// -t/--threads, -c/--ctx and -b/--batch-size with the shared limits.
CLI::Option* add_threads_flag(CLI::App* app, int& threads, const std::string& what = "threads");
CLI::Option* add_context_flag(CLI::App* app, int32_t& n_ctx, const std::string& description);
CLI::Option* add_batch_flag(CLI::App* app, int32_t& n_batch);
// --state-checkpoints MIB: host memory for a recurrent state's checkpoints (0: the default).
CLI::Option* add_state_checkpoints_flag(CLI::App* app, int64_t& mib);
constexpr int64_t kMaxStateCheckpointsFlag = int64_t{1} << 20;  // MiB: 1 TiB
// --backend NAME, one of the registered backends (backend/backend.h).
CLI::Option* add_backend_flag(CLI::App* app, std::string& backend);

}  // namespace sinter::cli
