// Feeds arbitrary bytes to the tool-call parsers as a model's reply: whole (parse_reply), and
// streamed in pieces whose sizes the input chooses. Every outcome must be a parsed message, never
// a crash or a hang, and the streamed deltas must add up to exactly the whole parse (a mismatch
// traps: a stream would have sent text that the whole parse places elsewhere).
// Input: byte 0 picks the family and the reasoning options, byte 1 seeds the piece sizes (its
// high bit: parameter types for the XML format), the rest is the reply. Seeds: fuzz/corpus/tool_call/ (the
// replies of tests/chat/data/tool_calls).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "chat/tools/streaming_parser.h"
#include "chat/tools/tool_call_parser.h"

namespace {

using namespace sinter::chat::tools;

constexpr ToolFamily kFamilies[] = {ToolFamily::kGeneric,  ToolFamily::kHermes,      ToolFamily::kLlama3,
                                    ToolFamily::kMistral,  ToolFamily::kMistralArgs, ToolFamily::kGranite,
                                    ToolFamily::kPhi4Mini, ToolFamily::kDeepSeekR1,  ToolFamily::kDeepSeekV31,
                                    ToolFamily::kGptOss,   ToolFamily::kQwenXml};
constexpr size_t kFamilyCount = sizeof(kFamilies) / sizeof(kFamilies[0]);

bool same(const ParsedMessage& a, const ParsedMessage& b) {
  if (a.content != b.content || a.reasoning_content != b.reasoning_content) return false;
  if (a.tool_calls.size() != b.tool_calls.size()) return false;
  for (size_t i = 0; i < a.tool_calls.size(); ++i) {
    const ToolCall& x = a.tool_calls[i];
    const ToolCall& y = b.tool_calls[i];
    if (x.id != y.id || x.name != y.name || x.arguments != y.arguments) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2 || size > 8192) return 0;
  uint8_t selector = data[0];
  uint32_t seed = data[1];
  std::string_view text(reinterpret_cast<const char*>(data) + 2, size - 2);

  ToolFormat format = tool_format_for(kFamilies[selector % kFamilyCount]);
  if (selector & 0x10) {
    format.reasoning_open = (selector & 0x40) ? "[THINK]" : "<think>";
    format.reasoning_close = (selector & 0x40) ? "[/THINK]" : "</think>";
  }
  ParseOptions options;
  options.reasoning = !(selector & 0x20);
  options.reasoning_open_in_prompt = selector & 0x80;
  if (seed & 0x80) {
    // The XML format reads values by their parameters' types.
    options.parameter_types["get_weather"] = {
        {"city", {"string"}}, {"days", {"integer"}}, {"hot", {"boolean"}}};
  }

  ParsedMessage whole = parse_reply(format, text, options);

  StreamingParser parser(format, options);
  ParsedMessage rebuilt;
  auto apply = [&](const MessageDelta& delta) {
    rebuilt.content += delta.content;
    rebuilt.reasoning_content += delta.reasoning_content;
    for (const ToolCallDelta& call : delta.tool_calls) {
      if (call.index > rebuilt.tool_calls.size()) __builtin_trap();
      if (call.index == rebuilt.tool_calls.size())
        rebuilt.tool_calls.push_back(ToolCall{call.id, call.name, "", false});
      rebuilt.tool_calls[call.index].arguments += call.arguments;
    }
  };
  size_t pos = 0;
  while (pos < text.size()) {
    seed = seed * 1103515245u + 12345u;
    size_t n = 1 + (seed >> 16) % 7;
    apply(parser.push(text.substr(pos, n)));
    pos += n;
  }
  apply(parser.finish());
  if (!same(rebuilt, whole)) __builtin_trap();
  return 0;
}
