#include "support/process.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "support/test_paths.h"

namespace sinter::testing {

std::string shell_quote(const std::string& argument) {
  std::string out = "'";
  for (char c : argument) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

CommandResult run_command(const std::string& command) {
  CommandResult result;
  char err_path[] = "/tmp/sinter-test-stderr-XXXXXX";
  const int err_fd = mkstemp(err_path);
  if (err_fd < 0) return result;
  ::close(err_fd);
  const std::string full = command + " 2>" + err_path;
  FILE* pipe = popen(full.c_str(), "r");
  if (pipe == nullptr) return result;
  char buffer[65536];
  size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) result.out.append(buffer, n);
  const int status = pclose(pipe);
  result.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream err_file(err_path, std::ios::binary);
  std::ostringstream err;
  err << err_file.rdbuf();
  result.err = err.str();
  std::remove(err_path);
  return result;
}

std::string join_ids(const std::vector<int>& ids) {
  std::string out;
  for (size_t i = 0; i < ids.size(); ++i) out += (i ? "," : "") + std::to_string(ids[i]);
  return out;
}

namespace {

// `script` ARGUMENTS: ../shared/oracle/run, or a script of tests/references that runs the oracle's
// installation.
nlohmann::json run_oracle(const std::string& arguments, const std::string& script = "") {
  // One thread: llama.cpp's spinning thread pool slows down by 40x when the machine is busy
  // (ctest runs tests in parallel), and its numerics do not depend on the thread count except in
  // the split-KV decode path, which one thread avoids.
  const std::string program = script.empty()
                                  ? shell_quote(shared_dir() + "/oracle/run")
                                  : "node --preserve-symlinks " +
                                        shell_quote(source_dir() + "/tests/references/" + script);
  const std::string command = "ORACLE_THREADS=1 " + program + " " + arguments;
  // The oracle's launcher copies its script into a shared cache on every call, so a call that
  // starts while another one copies can read a truncated script (it then prints nothing, or a
  // syntax error). That is the harness failing, not the answer being wrong: try again.
  constexpr int kAttempts = 3;
  std::string failure;
  for (int attempt = 1; attempt <= kAttempts; ++attempt) {
    const CommandResult result = run_command(command);
    if (result.exit_status != 0) {
      failure = "oracle failed (" + std::to_string(result.exit_status) + "): " + command + "\n" + result.err;
      continue;
    }
    try {
      return nlohmann::json::parse(result.out);
    } catch (const std::exception& e) {
      failure = std::string("oracle printed non-JSON: ") + e.what() + "\n" + result.out.substr(0, 500) +
                "\n" + result.err.substr(0, 2000);
    }
  }
  ADD_FAILURE() << failure << "\n(" << kAttempts << " attempts)";
  return nlohmann::json::array();
}

std::vector<std::vector<std::pair<int, double>>> distributions_of(const nlohmann::json& json) {
  std::vector<std::vector<std::pair<int, double>>> out;
  for (const auto& position : json) {
    auto& row = out.emplace_back();
    for (const auto& pair : position) row.emplace_back(pair[0].get<int>(), pair[1].get<double>());
  }
  return out;
}

}  // namespace

std::vector<int> oracle_tokenize(const std::string& model, const std::string& text) {
  return run_oracle("tokenize " + shell_quote(model) + " " + shell_quote(text)).get<std::vector<int>>();
}

std::vector<int> oracle_greedy(const std::string& model, int count, const std::string& text) {
  return run_oracle("greedy " + shell_quote(model) + " " + std::to_string(count) + " " + shell_quote(text))
      .get<std::vector<int>>();
}

std::vector<std::vector<std::pair<int, double>>> oracle_probs(const std::string& model,
                                                              const std::vector<int>& ids, int top_n) {
  return distributions_of(
      run_oracle("probs " + shell_quote(model) + " " + join_ids(ids) + " " + std::to_string(top_n)));
}

std::vector<std::vector<std::pair<int, double>>> oracle_probs_flash(const std::string& model,
                                                                    const std::vector<int>& ids) {
  return distributions_of(run_oracle(shell_quote(model) + " " + join_ids(ids), "oracle_probs_flash.mjs"));
}

const std::string& bert_tokenizer_dir() {
  static const std::string dir = [] {
    const std::string out = scratch_dir() + "/../bert-tokenizer";
    const auto result =
        run_command("node " + shell_quote(source_dir() + "/tests/references/make_bert_tokenizer.mjs") + " " +
                    shell_quote(out));
    EXPECT_EQ(result.exit_status, 0) << result.err;
    return out;
  }();
  return dir;
}

std::vector<double> oracle_embed(const std::string& model, const std::string& text) {
  return run_oracle("embed " + shell_quote(model) + " " + shell_quote(text)).get<std::vector<double>>();
}

std::vector<double> oracle_rank(const std::string& model, const std::string& query,
                                const std::vector<std::string>& documents) {
  std::string arguments = "rank " + shell_quote(model) + " " + shell_quote(query);
  for (const auto& document : documents) arguments += " " + shell_quote(document);
  return run_oracle(arguments).get<std::vector<double>>();
}

CommandResult run_sinter(const std::string& arguments) {
  return run_command(shell_quote(sinter_binary()) + " " + arguments);
}

}  // namespace sinter::testing
