// `sinter embed -m MODEL [TEXT...|--file F]`: one vector per input from an embedding (encoder)
// model, pooled as the file says (or --pooling) and normalized as --normalize says (llama-server's
// embd_normalize; 2, L2, by default). Inputs are tokenized with the model's special tokens
// (BERT: [CLS] text [SEP]) and embedded many per forward pass. Prints a JSON array of vectors
// (`--output json`), or one vector per line (`jsonl`); with pooling `none` an input's entry is
// the array of its tokens' vectors.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/flag_bounds.h"
#include "runtime/embedding.h"
#include "tokenizer/tokenizer.h"

namespace sinter::cli {
namespace {

struct EmbedArgs {
  std::string model;
  std::vector<std::string> texts;
  std::string file;
  std::string pooling;
  int32_t normalize = kNormalizeEuclidean;
  std::string output = "json";
  std::string backend = "cpu";
  int threads = 0;
  int32_t n_ctx = 0;
  int32_t inputs_per_pass = 0;
  bool verbose = false;
};

// One input per line of the file (empty lines skipped).
Result<std::vector<std::string>> read_lines(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(ErrorCode::kNotFound, "cannot read ", path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!line.empty()) lines.push_back(std::move(line));
  }
  return lines;
}

void append_vector(std::string& out, std::span<const float> values) {
  out += '[';
  for (size_t i = 0; i < values.size(); ++i) {
    char number[32];
    std::snprintf(number, sizeof number, "%s%.9g", i ? "," : "", static_cast<double>(values[i]));
    out += number;
  }
  out += ']';
}

// An input's entry: its vector, or with pooling none the array of its tokens' vectors.
std::string render(const std::vector<float>& values, size_t n_embd, bool per_token) {
  std::string out;
  if (!per_token) {
    append_vector(out, values);
    return out;
  }
  out += '[';
  for (size_t at = 0; at < values.size(); at += n_embd) {
    if (at) out += ',';
    append_vector(out, {values.data() + at, n_embd});
  }
  return out + ']';
}

int run(EmbedArgs& args) {
  if (args.output != "json" && args.output != "jsonl") return fail("--output must be json or jsonl");
  if (auto status = check_normalization(args.normalize); !status) return fail(status.error().message());
  EmbedOptions options;
  options.normalize = args.normalize;
  if (!args.pooling.empty()) {
    options.pooling = pooling_from_name(args.pooling);
    if (!options.pooling || *options.pooling == Pooling::kRank)
      return fail("--pooling must be none, mean, cls or last, not '" + args.pooling + "'");
  }
  std::vector<std::string> texts = args.texts;
  if (!args.file.empty()) {
    auto lines = read_lines(args.file);
    if (!lines) return fail(lines.error().message());
    texts.insert(texts.end(), lines->begin(), lines->end());
  }
  if (texts.empty()) return fail("no input: give texts or --file");

  auto loaded = LoadedModel::load(args.model, LoadOptions{args.backend, args.threads});
  if (!loaded) return fail(loaded.error().message());
  const ModelShape& shape = (*loaded)->model().shape();
  if (!shape.encoder) {
    return fail(args.model + ": the " + shape.architecture +
                " model is not an embedding model; `sinter embed` needs one (bert, nomic-bert, or a "
                "decoder file with a pooling type such as Qwen3-Embedding)");
  }
  auto tokenizer = Tokenizer::from_metadata((*loaded)->file().metadata());
  if (!tokenizer) return fail(args.model + ": " + tokenizer.error().message());
  std::vector<std::vector<TokenId>> inputs;
  for (const auto& text : texts) {
    auto ids = (*tokenizer)->encode(text, EncodeOptions{.add_special = true, .parse_special = false});
    if (!ids) return fail(ids.error().message());
    inputs.push_back(std::move(ids).value());
  }
  auto context = Context::create(*loaded, embedding_context_options(shape, args.n_ctx));
  if (!context) return fail(context.error().message());
  options.max_inputs_per_pass = args.inputs_per_pass;
  const auto start = std::chrono::steady_clock::now();
  auto vectors = embed_batch(**context, inputs, options);
  if (!vectors) return fail(vectors.error().message());
  if (args.verbose) {
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    size_t tokens = 0;
    for (const auto& input : inputs) tokens += input.size();
    std::fprintf(stderr, "sinter embed: %zu inputs, %zu tokens in %.3f s: %.1f inputs/s, %.1f tokens/s\n",
                 inputs.size(), tokens, seconds, static_cast<double>(inputs.size()) / seconds,
                 static_cast<double>(tokens) / seconds);
  }

  const bool per_token = options.pooling.value_or(shape.pooling) == Pooling::kNone;
  const auto n_embd = static_cast<size_t>(shape.n_embd);
  std::string out = args.output == "json" ? "[" : "";
  for (size_t i = 0; i < vectors->size(); ++i) {
    if (args.output == "json" && i) out += ',';
    out += render((*vectors)[i], n_embd, per_token);
    if (args.output == "jsonl") out += '\n';
  }
  if (args.output == "json") out += "]\n";
  std::fputs(out.c_str(), stdout);
  return 0;
}

CommandRun setup(CLI::App* app) {
  auto args = std::make_shared<EmbedArgs>();
  app->add_option("-m,--model", args->model, "GGUF embedding model file")->required();
  app->add_option("texts", args->texts, "texts to embed, one vector each");
  app->add_option("-f,--file", args->file, "embed each non-empty line of this file");
  app->add_option("--pooling", args->pooling, "none, mean, cls or last (default: the file's)");
  bounded(app->add_option("--normalize", args->normalize,
                          "-1 none, 0 max-abs (int16 range), 1 taxicab, 2 euclidean, >2 p-norm"),
          -1, 1 << 20, "2: euclidean (L2)");
  app->add_option("--output", args->output, "json (one array of vectors) or jsonl (a vector per line)");
  add_backend_flag(app, args->backend);
  add_threads_flag(app, args->threads);
  add_context_flag(app, args->n_ctx, "positions per pass (0: the model's, at most 8192)");
  bounded(app->add_option("--inputs-per-pass", args->inputs_per_pass,
                          "most inputs per forward pass (0: as many as fit; 1: one at a time)"),
          0, kMaxSequences, "0");
  app->add_flag("-v,--verbose", args->verbose, "print the inputs, tokens and time of the passes to stderr");
  return [args] { return run(*args); };
}

const CommandRegistration kEmbed{"embed", "Embedding vectors of texts from an embedding model (BERT and kin)",
                                 setup};

}  // namespace
}  // namespace sinter::cli
