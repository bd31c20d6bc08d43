// A conversation turned into prompt tokens: the model's chat template renders it (ChatML when
// the model has none), the text is tokenized with special tokens parsed, and BOS is added when
// the model wants one and the template did not write it.
#pragma once

#include <vector>

#include "chat/chat_template.h"
#include "core/token.h"
#include "tokenizer/tokenizer.h"

namespace sinter {

struct ChatPrompt {
  std::string text;             // the rendered template
  std::vector<TokenId> tokens;  // what the model reads
  bool has_bos = false;
};

Result<ChatPrompt> chat_prompt(const chat::ChatTemplate& chat_template, const chat::ChatRequest& request,
                               const Tokenizer& tokenizer);

}  // namespace sinter
