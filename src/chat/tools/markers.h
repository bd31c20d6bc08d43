// The literal markers of the tool-call formats, shared by detection, parsing and grammars.
#pragma once

#include <string_view>

namespace sinter::chat::tools {

inline constexpr std::string_view kHermesOpen = "<tool_call>";
inline constexpr std::string_view kHermesClose = "</tool_call>";
// Qwen3-Coder, Qwen 3.5 / 3.6: <tool_call>\n<function=NAME>\n<parameter=P>\nvalue\n</parameter>\n...
inline constexpr std::string_view kXmlFunctionOpen = "<function=";
inline constexpr std::string_view kXmlFunctionClose = "</function>";
inline constexpr std::string_view kXmlParameterOpen = "<parameter=";
inline constexpr std::string_view kXmlParameterClose = "</parameter>";
inline constexpr std::string_view kPythonTag = "<|python_tag|>";
inline constexpr std::string_view kMistralToolCalls = "[TOOL_CALLS]";
inline constexpr std::string_view kMistralArgsMarker = "[ARGS]";
inline constexpr std::string_view kMistralCallId = "[CALL_ID]";
inline constexpr std::string_view kGraniteToolCall = "<|tool_call|>";
inline constexpr std::string_view kPhi4ToolCallEnd = "<|/tool_call|>";
inline constexpr std::string_view kFunctools = "functools[";
inline constexpr std::string_view kDeepSeekCallsBegin = "<｜tool▁calls▁begin｜>";
inline constexpr std::string_view kDeepSeekCallsEnd = "<｜tool▁calls▁end｜>";
inline constexpr std::string_view kDeepSeekCallBegin = "<｜tool▁call▁begin｜>";
inline constexpr std::string_view kDeepSeekCallEnd = "<｜tool▁call▁end｜>";
inline constexpr std::string_view kDeepSeekSep = "<｜tool▁sep｜>";
inline constexpr std::string_view kHarmonyToFunctions = " to=functions.";
inline constexpr std::string_view kHarmonyStart = "<|start|>";
inline constexpr std::string_view kHarmonyChannel = "<|channel|>";
inline constexpr std::string_view kHarmonyMessage = "<|message|>";
inline constexpr std::string_view kHarmonyEnd = "<|end|>";
inline constexpr std::string_view kHarmonyCall = "<|call|>";
inline constexpr std::string_view kHarmonyReturn = "<|return|>";

}  // namespace sinter::chat::tools
