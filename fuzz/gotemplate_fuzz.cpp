// Feeds arbitrary bytes to the Go-template parser as an Ollama template, and renders whatever
// parses with a small conversation under tight limits: every outcome must be a text or an Error
// with a message ("template: ..."), never a crash, a hang or a leak.
// Seeds: fuzz/corpus/gotemplate/ (Ollama's templates and the feature cases of the tests).
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "chat/gotemplate/ollama_template.h"

namespace {

using sinter::chat::OllamaTemplateData;
using Json = nlohmann::ordered_json;

const OllamaTemplateData& conversation(bool legacy_turns) {
  static const OllamaTemplateData kData[2] = {
      [] {
        OllamaTemplateData data;
        auto messages = sinter::chat::ollama_messages_from_json(Json::parse(R"([
      {"role": "system", "content": "You are helpful."},
      {"role": "user", "content": "What's the weather in Paris? 日本 <&>"},
      {"role": "assistant", "content": "", "tool_calls": [{"id": "call_1",
        "function": {"name": "get_weather", "arguments": {"location": "Paris", "days": 3}}}]},
      {"role": "tool", "content": "{\"temperature\": 21}", "tool_name": "get_weather"},
      {"role": "assistant", "content": "21 degrees", "thinking": "easy"},
      {"role": "user", "content": "thanks", "images": ["AQID"]}])"));
        data.messages = messages.value();
        data.tools = Json::parse(R"([{"type": "function", "function": {"name": "get_weather",
      "description": "Weather", "parameters": {"type": "object", "required": ["location"],
      "properties": {"location": {"type": "string"}, "days": {"type": ["integer", "null"]},
      "trip": {"type": "object", "properties": {"to": {"type": "string"}}}}}}}])");
        data.is_think_set = true;
        data.think = true;
        data.now = std::chrono::system_clock::time_point(std::chrono::seconds(1700000000));
        return data;
      }(),
      [] {
        OllamaTemplateData data;
        data.prompt = "def f():";
        data.suffix = "  return 1";
        data.now = std::chrono::system_clock::time_point(std::chrono::seconds(1700000000));
        return data;
      }()};
  return kData[legacy_turns ? 1 : 0];
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view source(reinterpret_cast<const char*>(data), size);
  auto parsed = sinter::chat::OllamaTemplate::parse(source);
  if (!parsed) {
    if (parsed.error().message().empty()) __builtin_trap();
    return 0;
  }
  sinter::chat::RenderLimits limits;
  limits.max_output_bytes = 1 << 20;
  limits.max_value_bytes = 4 << 20;
  limits.max_steps = 200000;
  limits.max_template_depth = 20;
  for (bool fim : {false, true}) {
    auto text = parsed->render(conversation(fim), limits);
    if (!text && text.error().message().empty()) __builtin_trap();
    if (text && text->size() > limits.max_output_bytes) __builtin_trap();
  }
  return 0;
}
