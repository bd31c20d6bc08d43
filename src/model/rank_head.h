// A reranker's classification head (llama.cpp's rank pooling, as BGE-reranker files carry it):
//
//   score = cls_out · tanh(cls · h + cls_b) + cls_out_b
//
// over the hidden state h of each output row (the runtime asks for the first token of each
// pair). Either layer may be absent, as in llama.cpp (a file without cls.output gives the
// tanh layer's values; one without cls the projection alone).
#pragma once

#include "model/builder.h"
#include "model/weights.h"

namespace sinter {

struct RankHead {
  Tensor* cls = nullptr;  // [n_embd, n_embd]
  Tensor* cls_b = nullptr;
  Tensor* cls_out = nullptr;  // [n_embd, n_rank_outputs]
  Tensor* cls_out_b = nullptr;

  bool present() const { return cls != nullptr || cls_out != nullptr; }
  // Values per output row: cls.output's rows, else cls's, else n_embd.
  int32_t outputs(int32_t n_embd) const;
};

// Binds cls.weight/cls.bias and cls.output.weight/cls.output.bias; in a synthetic model only
// when `reranker` (pooling rank). Files carry one output (a relevance score) unless
// `n_outputs` says more.
RankHead bind_rank_head(WeightBinder& b, int64_t n_embd, bool reranker, int64_t n_outputs = 1);
// jina-reranker-v1's head (jina-bert-v2): cls.weight [n_embd, 1] and cls.bias [1], no
// cls.output: the score is tanh(cls · h + cls_b). Bound (and in synthetic models) when `reranker`.
RankHead bind_score_head(WeightBinder& b, int64_t n_embd, bool reranker);
// Qwen3-Reranker's head: cls.output.weight alone, [n_embd, n_outputs] (the output matrix's
// rows of "yes" and "no", as converters write it), required when `reranker`.
RankHead bind_projection_head(WeightBinder& b, int64_t n_embd, bool reranker, int64_t n_outputs);

// The rows of the file's cls.output.weight (a classifier has one per label: llama.cpp sizes it by
// classifier.output_labels), or `fallback` without one (synthetic models, schema mode).
int64_t head_rows(const WeightBinder& b, int64_t fallback);

// hidden [n_embd, n_outputs] -> [outputs(), n_outputs].
Tensor* build_rank_head(ForwardContext& fx, Tensor* hidden, const RankHead& head);

}  // namespace sinter
