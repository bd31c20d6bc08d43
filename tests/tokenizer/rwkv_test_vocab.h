// An RWKV "world"-style vocabulary for tests, stored as llama.cpp's converter stores the real
// one (conversion/base.py, _set_vocab_rwkv_world): "<s>" (control) first, then each token's bytes
// written as Python's repr(bytes)[2:-1] — printable ASCII as it is, `\\`, the quote, `\t` `\n` `\r`
// and `\xNN` for every other byte. Every byte is a token of its own, as in the world vocabulary.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "gguf/metadata.h"

namespace sinter::testing {

// repr(b)[2:-1] for the bytes b: Python quotes with ' unless b holds ' and no ", and escapes the
// quote it uses.
inline std::string python_bytes_repr_body(std::string_view bytes) {
  const bool double_quoted =
      bytes.find('\'') != std::string_view::npos && bytes.find('"') == std::string_view::npos;
  const char quote = double_quoted ? '"' : '\'';
  std::string out;
  for (char c : bytes) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '\\' || c == quote) {
      out += '\\';
      out += c;
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (byte < 0x20 || byte >= 0x7f) {
      char escaped[5];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", byte);
      out += escaped;
    } else {
      out += c;
    }
  }
  return out;
}

// The tokenizer keys of a vocabulary of "<s>", the 256 bytes and then `words` (byte strings,
// each once), with BOS and EOS 0 and EOT "\n\n" as the converter writes them.
inline Metadata rwkv_vocabulary(const std::vector<std::string>& words) {
  std::vector<std::string> tokens = {"<s>"};
  std::vector<int32_t> types = {3};  // control
  for (int byte = 0; byte < 256; ++byte) {
    tokens.push_back(python_bytes_repr_body(std::string(1, static_cast<char>(byte))));
    types.push_back(1);
  }
  uint32_t eot = 0;
  for (const std::string& word : words) {
    if (word == "\n\n") eot = static_cast<uint32_t>(tokens.size());
    tokens.push_back(python_bytes_repr_body(word));
    types.push_back(1);
  }
  Metadata md;
  md.set("tokenizer.ggml.model", GgufValue::of_string("rwkv"));
  md.set("tokenizer.ggml.tokens", GgufValue::of_strings(tokens));
  md.set("tokenizer.ggml.token_type", GgufValue::of_i32s(types));
  md.set("tokenizer.ggml.bos_token_id", GgufValue::of_u32(0));
  md.set("tokenizer.ggml.eos_token_id", GgufValue::of_u32(0));
  if (eot != 0) md.set("tokenizer.ggml.eot_token_id", GgufValue::of_u32(eot));
  return md;
}

}  // namespace sinter::testing
