#include "runtime/chat_prompt.h"

namespace sinter {

Result<ChatPrompt> chat_prompt(const chat::ChatTemplate& chat_template, const chat::ChatRequest& request,
                               const Tokenizer& tokenizer) {
  ChatPrompt prompt;
  SINTER_ASSIGN(prompt.text, chat::render(chat_template, request));
  // The template writes the special tokens itself (<|im_start|>, <s>, ...): parse them, add none.
  SINTER_ASSIGN(prompt.tokens,
                tokenizer.encode(prompt.text, EncodeOptions{/*add_special=*/false, /*parse_special=*/true}));
  const TokenId bos = tokenizer.bos();
  if (tokenizer.add_bos() && bos != kNoToken && (prompt.tokens.empty() || prompt.tokens.front() != bos)) {
    prompt.tokens.insert(prompt.tokens.begin(), bos);
  }
  prompt.has_bos = bos != kNoToken && !prompt.tokens.empty() && prompt.tokens.front() == bos;
  if (prompt.tokens.empty())
    return make_error(ErrorCode::kInvalidArgument, "the conversation renders to an empty prompt");
  return prompt;
}

}  // namespace sinter
