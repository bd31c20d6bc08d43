// `sinter rerank -m MODEL QUERY DOC...`: the relevance of each document to the query from a
// reranking model (pooling rank with a classification head), as llama.cpp's rerank computes
// it. Prints one line per document, in the order given (sorted by score, highest first, with
// --sort): its index, its score and the document. The score is the head's raw output, as
// llama-server's /rerank answers it, or with --probability its sigmoid in [0, 1], as
// node-llama-cpp's rankAll reports it.
#include <algorithm>
#include <cstdio>
#include <numeric>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/flag_bounds.h"
#include "runtime/embedding.h"
#include "runtime/rerank.h"
#include "tokenizer/tokenizer.h"

namespace sinter::cli {
namespace {

struct RerankArgs {
  std::string model;
  std::string query;
  std::vector<std::string> documents;
  bool sort = false;
  bool probability = false;
  std::string backend = "cpu";
  int threads = 0;
  int32_t n_ctx = 0;
};

int run(RerankArgs& args) {
  if (args.documents.empty()) return fail("no documents to rank: give the query, then one or more documents");
  auto loaded = LoadedModel::load(args.model, LoadOptions{args.backend, args.threads});
  if (!loaded) return fail(loaded.error().message());
  const ModelShape& shape = (*loaded)->model().shape();
  if (auto status = check_reranker(shape); !status) return fail(args.model + ": " + status.error().message());
  auto tokenizer = Tokenizer::from_metadata((*loaded)->file().metadata());
  if (!tokenizer) return fail(args.model + ": " + tokenizer.error().message());
  auto prompt = rerank_prompt_template((*loaded)->file().metadata());
  if (!prompt) return fail(args.model + ": " + prompt.error().message());
  std::vector<std::vector<TokenId>> inputs;
  for (const auto& document : args.documents) {
    auto ids = rerank_tokens(**tokenizer, args.query, document, *prompt);
    if (!ids) return fail(ids.error().message());
    inputs.push_back(std::move(ids).value());
  }
  auto context = Context::create(*loaded, embedding_context_options(shape, args.n_ctx));
  if (!context) return fail(context.error().message());
  auto scores = rerank_scores(**context, inputs);
  if (!scores) return fail(scores.error().message());
  std::vector<size_t> order(scores->size());
  std::iota(order.begin(), order.end(), size_t{0});
  if (args.sort) {
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return (*scores)[a] > (*scores)[b]; });
  }
  for (size_t i : order) {
    const float score = args.probability ? rerank_probability(shape, (*scores)[i]) : (*scores)[i];
    std::printf("%zu\t%.9g\t%s\n", i, static_cast<double>(score), args.documents[i].c_str());
  }
  return 0;
}

CommandRun setup(CLI::App* app) {
  auto args = std::make_shared<RerankArgs>();
  app->add_option("-m,--model", args->model, "GGUF reranking model file (pooling rank)")->required();
  app->add_option("query", args->query, "the query")->required();
  app->add_option("documents", args->documents, "the documents to score against the query");
  app->add_flag("--sort", args->sort, "print the documents by score, highest first (default: in order)");
  app->add_flag("--probability", args->probability,
                "print sigmoid(score), in [0, 1], instead of the raw score");
  add_backend_flag(app, args->backend);
  add_threads_flag(app, args->threads);
  add_context_flag(app, args->n_ctx, "positions per pass (0: the model's, at most 8192)");
  return [args] { return run(*args); };
}

const CommandRegistration kRerank{"rerank", "Relevance scores of documents to a query from a reranking model",
                                  setup};

}  // namespace
}  // namespace sinter::cli
