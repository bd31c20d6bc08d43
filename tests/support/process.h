// Running commands from tests: the built `sinter` tool and the llama.cpp oracle
// (../shared/oracle/run), with their JSON outputs parsed.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace sinter::testing {

struct CommandResult {
  int exit_status = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

// Runs `command` through /bin/sh; stdout and stderr are captured separately.
CommandResult run_command(const std::string& command);
// Quotes one argument for /bin/sh.
std::string shell_quote(const std::string& argument);
// `sinter ARGUMENTS` (the built CLI; ARGUMENTS already quoted as the shell needs).
CommandResult run_sinter(const std::string& arguments);

// The oracle (llama.cpp through node-llama-cpp). Each fails the current test on error.
std::vector<int> oracle_tokenize(const std::string& model, const std::string& text);
std::vector<int> oracle_greedy(const std::string& model, int count, const std::string& text);
// For each position, (token id, probability) pairs sorted by probability (top_n = 0: all).
std::vector<std::vector<std::pair<int, double>>> oracle_probs(const std::string& model,
                                                              const std::vector<int>& ids, int top_n = 0);
// The same with llama.cpp's flash attention on (tests/references/oracle_probs_flash.mjs says why):
// what llama.cpp computes by default for models whose key and value heads differ in size, where
// node-llama-cpp turns it off.
std::vector<std::vector<std::pair<int, double>>> oracle_probs_flash(const std::string& model,
                                                                    const std::vector<int>& ids);

// The sequence embedding llama.cpp returns for a text (the file's pooling, not normalized).
std::vector<double> oracle_embed(const std::string& model, const std::string& text);
// One relevance score in [0, 1] per document (node-llama-cpp's rankAll: a sigmoid of the head).
std::vector<double> oracle_rank(const std::string& model, const std::string& query,
                                const std::vector<std::string>& documents);

std::string join_ids(const std::vector<int>& ids);  // "1,2,3"

// A folder with bert-base-uncased's tokenizer.json and tokenizer_config.json, written once per
// test process by tests/references/make_bert_tokenizer.mjs (for `sinter synth --tokenizer`).
const std::string& bert_tokenizer_dir();

}  // namespace sinter::testing
