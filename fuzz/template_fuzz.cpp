// Feeds arbitrary bytes to the chat-template parser as a template, and renders whatever parses
// with a small conversation under tight limits: every outcome must be a text or an Error with a
// message (a syntax error naming its line and column), never a crash, a hang or a leak.
// The render budget (steps, time, nesting, sizes) is set small; limit_* seeds are bombs.
// Seeds: fuzz/corpus/template/ (real model templates and one file per Jinja feature case).
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "chat/chat_template.h"
#include "chat/jinja/json.h"
#include "chat/jinja/template.h"

namespace {

using sinter::chat::Json;
using namespace sinter::chat::jinja;

const Variables& variables() {
  static const Variables kVariables = [] {
    Json messages = Json::parse(R"([
      {"role": "system", "content": "You are helpful."},
      {"role": "user", "content": "What's the weather in Paris? 日本 👩‍💻"},
      {"role": "assistant", "content": "", "tool_calls": [{"id": "call12345", "type": "function",
        "function": {"name": "get_weather", "arguments": {"location": "Paris"}}}]},
      {"role": "tool", "tool_call_id": "call12345", "content": "{\"temperature\": 21}"},
      {"role": "user", "content": [{"type": "text", "text": "thanks"}, {"type": "image"}]}])");
    Json tools = Json::parse(R"([{"type": "function", "function": {"name": "get_weather",
      "parameters": {"type": "object", "properties": {"location": {"type": "string"}}}}}])");
    Variables v;
    v.emplace_back("messages", from_json(messages).value());
    v.emplace_back("tools", from_json(tools).value());
    v.emplace_back("add_generation_prompt", Value(true));
    v.emplace_back("bos_token", Value("<s>"));
    v.emplace_back("eos_token", Value("</s>"));
    return v;
  }();
  return kVariables;
}

bool located(const std::string& message) { return message.rfind("line ", 0) == 0; }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view source(reinterpret_cast<const char*>(data), size);
  auto parsed = Template::parse(source);
  if (!parsed) {
    const std::string& message = parsed.error().message();
    // Every syntax error names its place; only undecodable input is reported by byte offset.
    if (!located(message) && message.find("UTF-8") == std::string::npos) __builtin_trap();
    return 0;
  }
  // Small limits, so that bombs (loops, recursion that fans out, huge repeats) end fast and each
  // limit is reached often enough to be exercised.
  RenderOptions options;
  options.limits.max_call_depth = 40;
  options.limits.max_depth = 300;
  options.limits.max_loop_iterations = 20000;
  options.limits.max_steps = 200000;
  options.limits.max_time = std::chrono::milliseconds(2000);
  options.limits.max_output_bytes = 1 << 20;
  options.limits.max_built_bytes = 16 << 20;
  options.now = std::chrono::system_clock::time_point(std::chrono::seconds(1700000000));
  for (bool allow_mutation : {false, true}) {
    options.allow_mutation = allow_mutation;
    auto text = parsed->render(variables(), options);
    if (!text && text.error().message().empty()) __builtin_trap();
    // A limit is the request's fault (a 400 from the server), never an internal error.
    if (!text && text.error().message().find("template limit exceeded") != std::string::npos &&
        text.error().code() != sinter::ErrorCode::kInvalidArgument)
      __builtin_trap();
    if (text && text->size() > options.limits.max_output_bytes) __builtin_trap();
  }
  return 0;
}
