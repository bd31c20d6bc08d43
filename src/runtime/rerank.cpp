#include "runtime/rerank.h"

#include <cmath>

#include "runtime/embedding.h"

namespace sinter {

Status check_reranker(const ModelShape& model) {
  if (model.encoder && model.pooling == Pooling::kRank && model.n_rank_outputs > 0) return ok_status();
  return make_error(ErrorCode::kUnsupported, "the ", model.architecture,
                    " model is not a reranker (a file with pooling type rank and a classification head)");
}

namespace {

constexpr std::string_view kQueryPlaceholder = "{query}";
constexpr std::string_view kDocumentPlaceholder = "{document}";

// The template with each placeholder replaced, left to right in one pass.
std::string fill_rerank_prompt(std::string_view prompt_template, std::string_view query,
                               std::string_view document) {
  std::string out;
  out.reserve(prompt_template.size() + query.size() + document.size());
  for (size_t i = 0; i < prompt_template.size();) {
    const std::string_view rest = prompt_template.substr(i);
    if (rest.starts_with(kQueryPlaceholder)) {
      out += query;
      i += kQueryPlaceholder.size();
    } else if (rest.starts_with(kDocumentPlaceholder)) {
      out += document;
      i += kDocumentPlaceholder.size();
    } else {
      out += prompt_template[i++];
    }
  }
  return out;
}

}  // namespace

Result<std::string> rerank_prompt_template(const Metadata& metadata) {
  constexpr std::string_view kKey = "tokenizer.chat_template.rerank";
  SINTER_ASSIGN(const std::optional<std::string> prompt, metadata.find<std::string>(kKey));
  if (!prompt) return std::string();
  for (const std::string_view placeholder : {kQueryPlaceholder, kDocumentPlaceholder}) {
    if (prompt->find(placeholder) == std::string::npos) {
      return make_error(ErrorCode::kInvalidArgument, "the model's rerank prompt (", kKey, ") has no ",
                        placeholder, " placeholder");
    }
  }
  return *prompt;
}

Result<std::vector<TokenId>> rerank_tokens(const Tokenizer& tokenizer, std::string_view query,
                                           std::string_view document, std::string_view prompt_template) {
  if (!prompt_template.empty()) {
    return tokenizer.encode(fill_rerank_prompt(prompt_template, query, document),
                            EncodeOptions{.add_special = false, .parse_special = true});
  }
  const EncodeOptions plain{.add_special = false, .parse_special = false};
  SINTER_ASSIGN(std::vector<TokenId> query_ids, tokenizer.encode(query, plain));
  SINTER_ASSIGN(std::vector<TokenId> document_ids, tokenizer.encode(document, plain));
  const SpecialTokens& special = tokenizer.vocabulary().special();
  if (special.eos == kNoToken && special.separator == kNoToken) {
    return make_error(ErrorCode::kUnsupported,
                      "the vocabulary has neither an end-of-sequence nor a separator token to join a "
                      "query and a document");
  }
  // BOS query EOS SEP document EOS, each special token only where the vocabulary has it.
  std::vector<TokenId> out;
  out.reserve(query_ids.size() + document_ids.size() + 4);
  const auto add = [&out](TokenId id) {
    if (id != kNoToken) out.push_back(id);
  };
  add(special.bos);
  out.insert(out.end(), query_ids.begin(), query_ids.end());
  add(special.eos);
  add(special.separator);
  out.insert(out.end(), document_ids.begin(), document_ids.end());
  add(special.eos);
  return out;
}

Result<std::vector<float>> rerank_scores(Context& context, std::span<const std::vector<TokenId>> inputs) {
  SINTER_TRY(check_reranker(context.model().model().shape()));
  SINTER_ASSIGN(auto outputs, embed_batch(context, inputs, {.pooling = Pooling::kRank}));
  std::vector<float> scores;
  scores.reserve(outputs.size());
  for (const auto& values : outputs) scores.push_back(values.front());
  return scores;
}

float rerank_probability(float score) {
  return static_cast<float>(1.0 / (1.0 + std::exp(-static_cast<double>(score))));
}

float rerank_probability(const ModelShape& model, float score) {
  return model.rank_is_probability ? score : rerank_probability(score);
}

}  // namespace sinter
