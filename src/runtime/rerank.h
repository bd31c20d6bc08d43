// Reranking: one relevance score per (query, document) pair from a reranking model, a file
// whose `{arch}.pooling_type` is rank (4) and which carries a classification head
// (`cls.weight`/`cls.bias` then `cls.output.weight`/`cls.output.bias`, as BGE-reranker files
// do), as llama.cpp and llama-server compute it:
//
//   auto tokenizer = Tokenizer::from_metadata(model->file().metadata());
//   auto context = Context::create(model, embedding_context_options(model->model().shape()));
//   std::vector<std::vector<TokenId>> pairs;
//   auto prompt = rerank_prompt_template(model->file().metadata());   // "" for most files
//   for (auto& document : documents) pairs.push_back(*rerank_tokens(**tokenizer, query, document, *prompt));
//   auto scores = rerank_scores(**context, pairs);               // raw scores, one per pair
//   float p = rerank_probability((*scores)[0]);                  // in [0, 1]
//
// The pairs of a call share forward passes as embed_batch's inputs do; a pair's score is
// bit-for-bit the one it gets alone.
#pragma once

#include <span>
#include <string_view>
#include <vector>

#include "core/token.h"
#include "gguf/metadata.h"
#include "runtime/context.h"
#include "tokenizer/tokenizer.h"

namespace sinter {

// Whether `model` is a reranker (rank pooling with a classification head); an error saying why
// not otherwise.
Status check_reranker(const ModelShape& model);

// The file's rerank prompt, `tokenizer.chat_template.rerank` (Qwen3-Reranker conversions carry
// one): text in which "{query}" and "{document}" stand for the pair's texts. Empty when the file
// has none; an error when it is not a string or lacks a placeholder.
Result<std::string> rerank_prompt_template(const Metadata& metadata);

// The tokens of one (query, document) pair. With a prompt template (above), as llama-server
// forms them: each placeholder replaced by its text (in one pass: a query holding "{document}"
// stays as it is), the whole prompt tokenized without BOS/EOS added and with special-token text
// parsed (the template's <|im_start|> and the like; in the texts too, as llama-server does).
// Without one, as llama.cpp's reference (node-llama-cpp's ranking context) forms them:
//   BOS query EOS SEP document EOS
// each of BOS, EOS and SEP left out where the vocabulary has none: a BERT WordPiece file (CLS as
// BOS, no EOS) gives [CLS] query [SEP] document; an XLM-RoBERTa one (BGE-reranker-v2) gives
// <s> query </s></s> document </s>. Query and document are tokenized without special tokens,
// special-token text in them not parsed.
Result<std::vector<TokenId>> rerank_tokens(const Tokenizer& tokenizer, std::string_view query,
                                           std::string_view document, std::string_view prompt_template = {});

// The raw score of each pair (the classification head's first output, as llama-server's
// /rerank answers it), in their order. The context's model must be a reranker; each input must
// fit one pass (as for embed_batch). Inputs are packed into as few passes as fit; a score does
// not depend on the other inputs of the call.
Result<std::vector<float>> rerank_scores(Context& context, std::span<const std::vector<TokenId>> inputs);

// A raw score as a probability in [0, 1] (the logistic sigmoid), as node-llama-cpp's rank
// reports it.
float rerank_probability(float score);
// The same for `model`'s scores: unchanged where they are probabilities already
// (ModelShape::rank_is_probability: Qwen3-Reranker's softmax over "yes" and "no").
float rerank_probability(const ModelShape& model, float score);

}  // namespace sinter
