// Numeric flags out of range and contexts that do not fit: each is refused at start-up with a
// clear message and exit status 1 (never an abort, a hang or a machine's memory spent), and a
// huge context that does fit costs memory only for the tokens it holds.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

#include "core/large_buffer.h"
#include "core/memory_info.h"
#include "support/process.h"
#include "support/test_paths.h"

namespace sinter {
namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;

struct MeasuredRun {
  int exit_status = -1;  // -1: killed by a signal (or by the time limit)
  bool timed_out = false;
  std::string out;
  std::string err;
  uint64_t peak_rss_bytes = 0;  // the child's largest resident set
};

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string temporary_file() {
  char path[] = "/tmp/sinter-limits-XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0) return {};
  ::close(fd);
  return path;
}

// Runs `sinter args...` directly (no shell, so that wait4 reports sinter's own peak RSS), killing
// it after `limit_seconds`.
MeasuredRun run_sinter(const std::vector<std::string>& args, int limit_seconds = 30) {
  MeasuredRun result;
  const std::string out_path = temporary_file(), err_path = temporary_file();
  if (out_path.empty() || err_path.empty()) return result;
  const std::string binary = testing::sinter_binary();
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(binary.c_str()));
  for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) return result;
  if (pid == 0) {
    if (!freopen("/dev/null", "r", stdin) || !freopen(out_path.c_str(), "w", stdout) ||
        !freopen(err_path.c_str(), "w", stderr))
      _exit(127);
    execv(binary.c_str(), argv.data());
    _exit(127);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(limit_seconds);
  int status = 0;
  rusage usage{};
  for (;;) {
    const pid_t done = wait4(pid, &status, WNOHANG, &usage);
    if (done == pid) break;
    if (done < 0) return result;
    if (std::chrono::steady_clock::now() > deadline && !result.timed_out) {
      result.timed_out = true;
      kill(pid, SIGKILL);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  result.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.peak_rss_bytes = static_cast<uint64_t>(usage.ru_maxrss) * 1024;  // KiB on Linux
  result.out = read_file(out_path);
  result.err = read_file(err_path);
  std::remove(out_path.c_str());
  std::remove(err_path.c_str());
  return result;
}

void expect_refused(const MeasuredRun& run, const std::string& words) {
  EXPECT_FALSE(run.timed_out) << "still running at the time limit";
  EXPECT_EQ(run.exit_status, 1) << "stderr: " << run.err;
  EXPECT_NE(run.err.find("sinter: error: " + words), std::string::npos) << "stderr: " << run.err;
  // Refused before loading anything large.
  EXPECT_LT(run.peak_rss_bytes, 256 * kMiB);
}

TEST(CliLimits, RunRefusesAContextBeyondTheLimit) {
  expect_refused(
      run_sinter({"run", "-m", testing::stories_model(), "-p", "Once", "-n", "2", "-c", "2147483647"}),
      "--ctx must be between 0 and 16777216");
}

TEST(CliLimits, RunRefusesMoreThreadsThanTheMachineCanUse) {
  expect_refused(run_sinter({"run", "-m", testing::stories_model(), "-p", "Once", "-n", "2", "-t", "100000"}),
                 "--threads must be between 0 and ");
}

TEST(CliLimits, ServeRefusesMoreThreadsAtStartUp) {
  const auto run = run_sinter({"serve", "-m", testing::stories_model(), "--port", "0", "-t", "100000"}, 20);
  expect_refused(run, "--threads must be between 0 and ");
  EXPECT_EQ(run.out.find("listening"), std::string::npos) << run.out;
}

TEST(CliLimits, EveryCommandRangeChecksItsNumericFlags) {
  const std::string m = testing::stories_model();
  const std::string out = testing::scratch_dir() + "/never-written.gguf";
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"run", "-m", m, "-p", "x", "-t", "-1"}, "--threads must be between 0 and "},
      {{"run", "-m", m, "-p", "x", "-c", "-5"}, "--ctx must be between 0 and 16777216"},
      {{"run", "-m", m, "-p", "x", "-c", "99999999999"}, "--ctx must be between 0 and 16777216"},
      {{"run", "-m", m, "-p", "x", "-b", "0"}, "--batch-size must be between 1 and 16777216, got 0"},
      {{"chat", "-m", m, "-t", "100000"}, "--threads must be between 0 and "},
      {{"chat", "-m", m, "-c", "2147483647"}, "--ctx must be between 0 and 16777216"},
      {{"probs", m, "1,2", "-t", "100000"}, "--threads must be between 0 and "},
      {{"probs", m, "1,2", "-5"}, "top_n must be between 0 and 2147483647"},
      {{"bench", "-m", m, "-t", "100000"}, "--threads must be between 0 and "},
      {{"bench", "-m", m, "-p", "2147483647"}, "--n-prompt must be between 0 and 16777216"},
      {{"bench", "-m", m, "-d", "-1"}, "--depth must be between 0 and 16777216"},
      {{"bench", "-m", m, "-r", "0"}, "--repetitions must be between 1 and 1000"},
      {{"serve", "-m", m, "-c", "2147483647"}, "--ctx must be between 0 and 16777216"},
      {{"serve", "-m", m, "--parallel", "65"}, "--parallel must be between 1 and 64, got 65"},
      {{"serve", "-m", m, "--max-queue", "0"}, "--max-queue must be between 1 and "},
      {{"serve", "-m", m, "--max-body", "-1"}, "--max-body must be between 1 and "},
      {{"serve", "-m", m, "--port", "70000"}, "--port must be between 0 and 65535"},
      {{"quantize", m, out, "q8_0", "-t", "100000"}, "--threads must be between 0 and "},
      {{"synth", "llama", out, "--n-embd", "100000000"}, "--n-embd must be between 0 and 65536"},
      {{"synth", "llama", out, "--n-layer", "-2"}, "--n-layer must be between 0 and "},
  };
  for (const auto& [args, words] : cases) {
    SCOPED_TRACE(args[0] + " " + args[args.size() - 2] + " " + args.back());
    expect_refused(run_sinter(args, 20), words);
  }
}

// stories260K's cache is 640 bytes a cell: 6.4 GB for ten million cells. Where that fits, the
// run commits memory only for the cells it uses; where it does not, the memory plan refuses.
TEST(CliLimits, AHugeContextOnATinyModelCostsMemoryOnlyForItsTokens) {
  const auto run = run_sinter({"run", "-m", testing::stories_model(), "-p", "Once upon a time", "-n", "2",
                               "-t", "1", "--temp", "0", "-c", "10000000"},
                              60);
  ASSERT_FALSE(run.timed_out);
  if (run.exit_status == 0) {
    // Keys and values of a few tokens (a huge page per head plane where huge pages are on: 40
    // planes, 80 MiB), the first pages of the cell records, the model and the graphs. Under
    // AddressSanitizer the cache is a heap block, and freeing it writes its shadow: 1/8 of it.
    const uint64_t shadow = LargeBuffer::kMapsLargeBuffers ? 0 : 6400000000 / 8;
    EXPECT_LT(run.peak_rss_bytes, 512 * kMiB + shadow) << "peak RSS " << run.peak_rss_bytes / kMiB << " MiB";
  } else {
    EXPECT_EQ(run.exit_status, 1);
    EXPECT_NE(run.err.find("a context of 10000000 tokens needs"), std::string::npos) << run.err;
    EXPECT_NE(run.err.find("is available"), std::string::npos) << run.err;
    EXPECT_LT(run.peak_rss_bytes, 256 * kMiB);
  }
}

// A model whose cache takes 32 KiB a cell (64 layers of 8 F32 heads of 8): 550 GB for 2^24 cells,
// more than any test machine has. The plan refuses it with both figures, before allocating.
TEST(CliLimits, TheMemoryPlanRefusesAContextThatCannotFit) {
  const auto available = available_memory();
  if (!available) GTEST_SKIP() << "the available memory is unknown here: nothing is refused";
  if (available->bytes > uint64_t{600} * 1000 * 1000 * 1000) GTEST_SKIP() << "this machine could hold it";
  const std::string model = testing::scratch_dir() + "/deep.gguf";
  const auto synth = testing::run_command(testing::shell_quote(testing::sinter_binary()) + " synth llama " +
                                          testing::shell_quote(model) +
                                          " --n-embd 64 --n-layer 64 --n-head 8 --n-head-kv 8 --n-ff 64"
                                          " --n-vocab 260 --n-ctx 64");
  ASSERT_EQ(synth.exit_status, 0) << synth.err;
  const auto run = run_sinter(
      {"run", "-m", model, "-p", "hi", "-n", "2", "-t", "1", "--kv-type", "f32", "-c", "16777216"});
  expect_refused(run, "a context of 16777216 tokens needs 550 GB of memory (KV cache 550 GB");
  EXPECT_NE(run.err.find("is available"), std::string::npos) << run.err;
}

}  // namespace
}  // namespace sinter
