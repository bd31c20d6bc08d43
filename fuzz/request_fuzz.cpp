// Feeds arbitrary bytes to the HTTP server's request parsers as a request body: the JSON object
// check, Ollama's "options", OpenAI's parameters (chat and completions), tools and reasoning
// fields, chat messages (with tool calls), keep_alive durations, and the embedding and rerank
// bodies. Every outcome must be a value or an Error with a message — never an exception, a crash,
// a hang or a leak. Seeds: fuzz/corpus/request/ (bodies of each API).
#include <cstddef>
#include <cstdint>
#include <string>

#include "server/durations.h"
#include "server/embed_request.h"
#include "server/json_fields.h"
#include "server/messages.h"
#include "server/request_parameters.h"
#include "server/tool_request.h"

namespace {

using Json = nlohmann::ordered_json;

template <typename T>
void check(const sinter::Result<T>& result) {
  if (!result && result.error().message().empty()) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string body(reinterpret_cast<const char*>(data), size);
  // The raw text as a Go-style duration ("5m", "1h30m", "-1s").
  check(sinter::server::parse_duration(body));
  auto parsed = sinter::server::parse_json_object(body);
  check(parsed);
  if (!parsed) return 0;
  const Json& object = *parsed;
  const auto options = object.find("options");
  check(sinter::server::read_ollama_options(options == object.end() ? nullptr : &*options));
  check(sinter::server::read_openai_parameters(object, /*chat=*/true));
  check(sinter::server::read_openai_parameters(object, /*chat=*/false));
  if (const auto messages = object.find("messages"); messages != object.end()) {
    check(sinter::server::read_messages(*messages, "messages"));
  }
  check(sinter::server::read_openai_tool_options(object));
  check(sinter::server::read_ollama_tool_options(object));
  check(sinter::server::parse_ollama_embed(object));
  check(sinter::server::parse_ollama_embeddings(object));
  check(sinter::server::parse_openai_embeddings(object));
  check(sinter::server::parse_rerank(object));
  if (const auto keep_alive = object.find("keep_alive"); keep_alive != object.end()) {
    check(sinter::server::parse_keep_alive(*keep_alive, "keep_alive"));
  }
  return 0;
}
