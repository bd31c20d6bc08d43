// Embedding throughput of a native llama.cpp (libllama from ../shared/native-reference), for the
// side-by-side figures of BENCHMARKS.md; a measuring tool, not part of sinter. Built and run by
// scripts/bench-embed.sh.
//
//   embed_reference MODEL THREADS FILE MAX_SEQS  -> "inputs tokens seconds"
//
// Each non-empty line of FILE is one input, tokenized with the model's special tokens (CLS/SEP or
// BOS/EOS as llama.cpp adds them). Inputs are packed into batches of at most MAX_SEQS sequences
// and n_batch tokens (MAX_SEQS 1: one input per forward pass), each its own sequence, and the
// pooled vector of every sequence is read back, as llama.cpp's embedding example does. The time
// covers tokenization, every pass and reading the vectors; not loading the model.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "llama.h"

namespace {

double seconds_now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void quiet(ggml_log_level, const char*, void*) {}

std::vector<llama_token> tokenize(const llama_vocab* vocab, const std::string& text) {
  std::vector<llama_token> tokens(text.size() + 8);
  int n = llama_tokenize(vocab, text.data(), static_cast<int>(text.size()), tokens.data(),
                         static_cast<int>(tokens.size()), true, true);
  if (n < 0) {
    tokens.resize(static_cast<size_t>(-n));
    n = llama_tokenize(vocab, text.data(), static_cast<int>(text.size()), tokens.data(),
                       static_cast<int>(tokens.size()), true, true);
  }
  tokens.resize(static_cast<size_t>(n));
  return tokens;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: embed_reference MODEL THREADS FILE MAX_SEQS\n");
    return 2;
  }
  if (std::getenv("REFH_VERBOSE") == nullptr) llama_log_set(quiet, nullptr);
  llama_backend_init();
  const int threads = std::atoi(argv[2]);
  const int max_seqs = std::atoi(argv[4]);
  llama_model* model = llama_model_load_from_file(argv[1], llama_model_default_params());
  if (model == nullptr) {
    std::fprintf(stderr, "cannot load %s\n", argv[1]);
    return 1;
  }
  const llama_vocab* vocab = llama_model_get_vocab(model);
  std::vector<std::string> lines;
  std::ifstream in(argv[3]);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) lines.push_back(line);

  const int n_batch = llama_model_n_ctx_train(model);
  llama_context_params params = llama_context_default_params();
  params.n_ctx = static_cast<uint32_t>(n_batch);
  params.n_batch = static_cast<uint32_t>(n_batch);
  params.n_ubatch = static_cast<uint32_t>(n_batch);  // non-causal attention: an input in one ubatch
  params.n_seq_max = static_cast<uint32_t>(max_seqs);
  params.n_threads = threads;
  params.n_threads_batch = threads;
  params.embeddings = true;
  llama_context* context = llama_init_from_model(model, params);
  if (context == nullptr) {
    std::fprintf(stderr, "cannot make a context\n");
    return 1;
  }
  const int n_embd = llama_model_n_embd(model);

  const double start = seconds_now();
  llama_batch batch = llama_batch_init(n_batch, 0, 1);
  size_t total_tokens = 0;
  double checksum = 0;
  std::vector<std::vector<llama_token>> pending;
  const auto flush = [&]() -> bool {
    batch.n_tokens = 0;
    for (size_t s = 0; s < pending.size(); ++s) {
      for (size_t i = 0; i < pending[s].size(); ++i) {
        const int at = batch.n_tokens++;
        batch.token[at] = pending[s][i];
        batch.pos[at] = static_cast<llama_pos>(i);
        batch.n_seq_id[at] = 1;
        batch.seq_id[at][0] = static_cast<llama_seq_id>(s);
        batch.logits[at] = 1;
      }
    }
    llama_memory_clear(llama_get_memory(context), true);
    if (llama_decode(context, batch) != 0) return false;
    for (size_t s = 0; s < pending.size(); ++s) {
      const float* vector = llama_get_embeddings_seq(context, static_cast<llama_seq_id>(s));
      if (vector == nullptr) return false;
      checksum += vector[0] + vector[n_embd - 1];
    }
    pending.clear();
    return true;
  };
  int queued_tokens = 0;
  for (const std::string& line : lines) {
    std::vector<llama_token> tokens = tokenize(vocab, line);
    if (static_cast<int>(tokens.size()) > n_batch) tokens.resize(static_cast<size_t>(n_batch));
    if (!pending.empty() && (queued_tokens + static_cast<int>(tokens.size()) > n_batch ||
                             static_cast<int>(pending.size()) >= max_seqs)) {
      if (!flush()) {
        std::fprintf(stderr, "decode failed\n");
        return 1;
      }
      queued_tokens = 0;
    }
    total_tokens += tokens.size();
    queued_tokens += static_cast<int>(tokens.size());
    pending.push_back(std::move(tokens));
  }
  if (!pending.empty() && !flush()) {
    std::fprintf(stderr, "decode failed\n");
    return 1;
  }
  const double elapsed = seconds_now() - start;
  std::printf("%zu %zu %.3f\n", lines.size(), total_tokens, elapsed);
  std::fprintf(stderr, "checksum %g\n", checksum);
  llama_batch_free(batch);
  llama_free(context);
  llama_model_free(model);
  return 0;
}
