// Feeds arbitrary bytes to the tokenizers and to the tokenizer.json importer. The first byte picks
// what runs: a SentencePiece, byte-level BPE (three pre-tokenizers) or WordPiece vocabulary on the
// rest as text (special tokens parsed or not), RWKV's world tokenizer likewise, or the importer on
// the rest as tokenizer.json.
// Encoding must succeed with ids inside the vocabulary, decoding and streaming must not crash and
// must agree, and a malformed tokenizer.json must be an Error.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "tokenizer/bpe_tokenizer.h"
#include "tokenizer/hf_import.h"
#include "tokenizer/tokenizer.h"

namespace {

using namespace sinter;

std::unique_ptr<Tokenizer> make(const Metadata& metadata) {
  auto tokenizer = Tokenizer::from_metadata(metadata);
  if (!tokenizer) std::abort();  // the hand-made vocabularies below are valid
  return std::move(tokenizer).value();
}

// Byte tokens, a few merged pieces, specials (one with lstrip, one with rstrip).
std::unique_ptr<Tokenizer> spm() {
  std::vector<std::string> tokens = {"<unk>", "<s>", "</s>"};
  std::vector<int32_t> types = {2, 3, 3};
  std::vector<float> scores = {0, 0, 0};
  char name[8];
  for (int b = 0; b < 256; ++b) {
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    tokens.push_back(name);
    types.push_back(6);
    scores.push_back(0);
  }
  const char* pieces[] = {"\xe2\x96\x81",
                          "a",
                          "b",
                          "\xe2\x96\x81"
                          "a",
                          "ab",
                          "\xe2\x96\x81"
                          "ab",
                          "\xc3\xa9",
                          "<tool>"};
  for (const char* piece : pieces) {
    tokens.push_back(piece);
    types.push_back(std::string(piece) == "<tool>" ? 4 : 1);
    scores.push_back(-static_cast<float>(tokens.size()));
  }
  Metadata m;
  m.set("tokenizer.ggml.model", GgufValue::of_string("llama"));
  m.set("tokenizer.ggml.tokens", GgufValue::of_strings(tokens));
  m.set("tokenizer.ggml.scores", GgufValue::of_f32s(scores));
  m.set("tokenizer.ggml.token_type", GgufValue::of_i32s(types));
  m.set(kLstripTokensKey, GgufValue::of_i32s({2}));
  return make(m);
}

std::unique_ptr<Tokenizer> bpe(const std::string& pre) {
  std::vector<std::string> tokens;
  for (int b = 0; b < 256; ++b) tokens.push_back(byte_to_unicode(static_cast<uint8_t>(b)));
  std::vector<int32_t> types(tokens.size(), 1);
  const std::string space = byte_to_unicode(' ');
  for (const std::string& extra :
       std::vector<std::string>{space + "a", "ab", space + "ab", "<|end|>", "<|start|>"}) {
    tokens.push_back(extra);
    types.push_back(extra[0] == '<' ? 3 : 1);
  }
  Metadata m;
  m.set("tokenizer.ggml.model", GgufValue::of_string("gpt2"));
  m.set("tokenizer.ggml.pre", GgufValue::of_string(pre));
  m.set("tokenizer.ggml.tokens", GgufValue::of_strings(tokens));
  m.set("tokenizer.ggml.token_type", GgufValue::of_i32s(types));
  m.set("tokenizer.ggml.merges", GgufValue::of_strings({space + " a", "a b", space + "a b"}));
  m.set(kLstripTokensKey, GgufValue::of_i32s({259}));
  m.set(kRstripTokensKey, GgufValue::of_i32s({260}));
  return make(m);
}

std::unique_ptr<Tokenizer> wordpiece() {
  Metadata m;
  m.set("tokenizer.ggml.model", GgufValue::of_string("bert"));
  m.set("tokenizer.ggml.tokens", GgufValue::of_strings({"[PAD]", "[UNK]", "[CLS]", "[SEP]",
                                                        "\xe2\x96\x81"
                                                        "a",
                                                        "b",
                                                        "\xe2\x96\x81"
                                                        "ab",
                                                        "##",
                                                        "\xe2\x96\x81"
                                                        "!",
                                                        "\xe2\x96\x81\xe4\xb8\xad"}));
  m.set("tokenizer.ggml.token_type", GgufValue::of_i32s({3, 2, 3, 3, 1, 1, 1, 1, 1, 1}));
  m.set("tokenizer.ggml.unknown_token_id", GgufValue::of_u32(1));
  m.set("tokenizer.ggml.bos_token_id", GgufValue::of_u32(2));
  m.set("tokenizer.ggml.seperator_token_id", GgufValue::of_u32(3));
  return make(m);
}

// RWKV's world tokenizer: every byte, a few longer tokens (one escaped), and "<s>" (control).
std::unique_ptr<Tokenizer> rwkv() {
  std::vector<std::string> tokens = {"<s>"};
  std::vector<int32_t> types = {3};
  char escaped[8];
  for (int b = 0; b < 256; ++b) {
    std::snprintf(escaped, sizeof escaped, "\\x%02x", b);
    tokens.push_back(escaped);
    types.push_back(1);
  }
  for (const char* word : {"ab", "abc", " a", "\\n\\n", "it\\'s", "\\xc3\\xa9"}) {
    tokens.push_back(word);
    types.push_back(1);
  }
  Metadata m;
  m.set("tokenizer.ggml.model", GgufValue::of_string("rwkv"));
  m.set("tokenizer.ggml.tokens", GgufValue::of_strings(tokens));
  m.set("tokenizer.ggml.token_type", GgufValue::of_i32s(types));
  return make(m);
}

void check(const Tokenizer& tokenizer, std::string_view text, bool add_special, bool parse_special,
           bool must_encode = true) {
  auto ids = tokenizer.encode(text, {add_special, parse_special});
  if (!ids) {
    if (must_encode) std::abort();  // the hand-made vocabularies cover every byte
    return;  // an imported vocabulary may lack an unknown token: then an Error is right
  }
  if (!tokenizer.check_ids(*ids)) std::abort();
  const std::string decoded = tokenizer.decode(*ids, true);
  StreamingDetokenizer stream(tokenizer, true);
  std::string streamed;
  std::string joined;
  for (TokenId id : *ids) {
    streamed += stream.push(id);
    joined += tokenizer.token_to_piece(id, true);
  }
  streamed += stream.flush();
  if (streamed != joined) std::abort();
  (void)decoded;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const auto spm_tokenizer = spm();
  static const auto gpt2_tokenizer = bpe("gpt-2");
  static const auto llama3_tokenizer = bpe("llama-bpe");
  static const auto qwen_tokenizer = bpe("qwen2");
  static const auto wordpiece_tokenizer = wordpiece();
  static const auto rwkv_tokenizer = rwkv();
  if (size == 0) return 0;
  const uint8_t mode = data[0];
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  const bool add_special = mode & 0x10;
  const bool parse_special = mode & 0x20;
  switch (mode % 7) {
    case 0: check(*spm_tokenizer, text, add_special, parse_special); break;
    case 1: check(*gpt2_tokenizer, text, add_special, parse_special); break;
    case 2: check(*llama3_tokenizer, text, add_special, parse_special); break;
    case 3: check(*qwen_tokenizer, text, add_special, parse_special); break;
    case 4: check(*wordpiece_tokenizer, text, add_special, parse_special); break;
    case 5: {
      auto imported = import_hf_tokenizer(text, "");
      if (imported) {
        auto tokenizer = Tokenizer::from_metadata(imported->metadata);
        if (tokenizer) check(**tokenizer, "Hello world, 123!", true, true, false);
      }
      break;
    }
    case 6: check(*rwkv_tokenizer, text, add_special, parse_special); break;
  }
  return 0;
}
