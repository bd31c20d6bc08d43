// `sinter probs MODEL IDS_CSV [TOPN]`: next-token probabilities at every position of the given
// token sequence (temperature 1, no other sampler), printed exactly in the oracle's shape:
// a JSON array with, per position, [token_id, probability] pairs sorted by probability.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <sstream>

#include "cli/command.h"
#include "cli/common.h"
#include "cli/flag_bounds.h"
#include "runtime/context.h"

namespace sinter::cli {
namespace {

struct ProbsArgs {
  std::string model;
  std::string ids;
  int top_n = 0;
  std::string backend = "cpu";
  int threads = 0;
  int n_batch = 512;
  std::string kv_type = "f16";
};

int run(const ProbsArgs& args) {
  auto ids = parse_ids(args.ids);
  if (!ids) return fail(ids.error().message());
  if (ids->empty()) return fail("no token ids given");
  auto loaded = LoadedModel::load(args.model, LoadOptions{args.backend, args.threads});
  if (!loaded) return fail(loaded.error().message());
  auto kv_type = parse_kv_type(args.kv_type);
  if (!kv_type) return fail(kv_type.error().message());
  ContextOptions options;
  options.n_ctx = std::max<int32_t>(static_cast<int32_t>(ids->size()), 256);
  options.n_batch = args.n_batch;
  options.kv_type = *kv_type;
  auto context = Context::create(*loaded, options);
  if (!context) return fail(context.error().message());
  std::vector<BatchEntry> batch;
  for (size_t i = 0; i < ids->size(); ++i) batch.push_back({(*ids)[i], static_cast<Position>(i), 0, true});
  if (auto status = (*context)->decode(batch); !status) return fail(status.error().message());

  const int32_t n_vocab = (*context)->n_vocab();
  std::vector<double> probabilities(static_cast<size_t>(n_vocab));
  std::vector<int32_t> order(static_cast<size_t>(n_vocab));
  std::string out = "[";
  for (int32_t position = 0; position < (*context)->output_count(); ++position) {
    const auto logits = (*context)->logits(position);
    softmax_double(logits, probabilities);
    std::iota(order.begin(), order.end(), 0);
    const size_t keep =
        args.top_n > 0 ? std::min<size_t>(static_cast<size_t>(args.top_n), order.size()) : order.size();
    std::partial_sort(
        order.begin(), order.begin() + static_cast<std::ptrdiff_t>(keep), order.end(),
        [&](int32_t a, int32_t b) {
          return probabilities[static_cast<size_t>(a)] > probabilities[static_cast<size_t>(b)] ||
                 (probabilities[static_cast<size_t>(a)] == probabilities[static_cast<size_t>(b)] && a < b);
        });
    out += position ? ",[" : "[";
    for (size_t k = 0; k < keep; ++k) {
      char item[64];
      std::snprintf(item, sizeof item, "%s[%d,%.9g]", k ? "," : "", order[k],
                    probabilities[static_cast<size_t>(order[k])]);
      out += item;
    }
    out += "]";
  }
  out += "]\n";
  std::fputs(out.c_str(), stdout);
  return 0;
}

CommandRun setup(CLI::App* app) {
  auto args = std::make_shared<ProbsArgs>();
  app->add_option("model", args->model, "GGUF model file")->required();
  app->add_option("ids", args->ids, "comma-separated token ids")->required();
  bounded(app->add_option("top_n", args->top_n, "keep the N most probable tokens per position (0: all)"), 0,
          INT32_MAX, "0: all");
  add_backend_flag(app, args->backend);
  add_threads_flag(app, args->threads);
  add_batch_flag(app, args->n_batch);
  app->add_option("--kv-type", args->kv_type, "KV cache type: f16, bf16 or f32");
  return [args] { return run(*args); };
}

const CommandRegistration kProbs{"probs", "Next-token probabilities at every position (the oracle's shape)",
                                 setup};

}  // namespace
}  // namespace sinter::cli
