#include "chat/tools/tool_format.h"

#include "chat/tools/markers.h"

namespace sinter::chat::tools {
namespace {

bool contains(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

}  // namespace

std::string_view tool_family_name(ToolFamily family) {
  switch (family) {
    case ToolFamily::kGeneric: return "generic";
    case ToolFamily::kHermes: return "hermes";
    case ToolFamily::kQwenXml: return "qwen3-coder";
    case ToolFamily::kLlama3: return "llama3";
    case ToolFamily::kMistral: return "mistral";
    case ToolFamily::kMistralArgs: return "mistral-args";
    case ToolFamily::kGranite: return "granite";
    case ToolFamily::kPhi4Mini: return "phi4-mini";
    case ToolFamily::kDeepSeekR1: return "deepseek-r1";
    case ToolFamily::kDeepSeekV31: return "deepseek-v3.1";
    case ToolFamily::kGptOss: return "gpt-oss";
  }
  return "generic";
}

std::optional<ToolFamily> tool_family_from_name(std::string_view name) {
  for (ToolFamily family :
       {ToolFamily::kGeneric, ToolFamily::kHermes, ToolFamily::kQwenXml, ToolFamily::kLlama3,
        ToolFamily::kMistral, ToolFamily::kMistralArgs, ToolFamily::kGranite, ToolFamily::kPhi4Mini,
        ToolFamily::kDeepSeekR1, ToolFamily::kDeepSeekV31, ToolFamily::kGptOss}) {
    if (tool_family_name(family) == name) return family;
  }
  return std::nullopt;
}

ToolFormat tool_format_for(ToolFamily family) {
  ToolFormat format;
  format.family = family;
  auto add = [&](std::string_view word, bool at_start = false) {
    format.triggers.push_back(ToolTrigger{std::string(word), at_start});
  };
  switch (family) {
    case ToolFamily::kGeneric: break;  // constrained from the first token, never lazily
    case ToolFamily::kHermes: add(kHermesOpen); break;
    case ToolFamily::kQwenXml:
      // Qwen3-Coder sometimes leaves out the <tool_call> wrapper (llama.cpp accepts both).
      add(kHermesOpen);
      add(kXmlFunctionOpen);
      break;
    case ToolFamily::kLlama3:
      // The bare JSON call is only a call as the whole reply; llama.cpp matches a pattern there.
      add("{\"name\"", true);
      add("{\"type\"", true);
      add(kPythonTag);
      format.python_tag = true;
      break;
    case ToolFamily::kMistral:
    case ToolFamily::kMistralArgs: add(kMistralToolCalls); break;
    case ToolFamily::kGranite: add(kGraniteToolCall); break;
    case ToolFamily::kPhi4Mini:
      add(kGraniteToolCall);
      add(kFunctools);
      break;
    case ToolFamily::kDeepSeekR1:
    case ToolFamily::kDeepSeekV31:
      add(kDeepSeekCallsBegin);
      add(kDeepSeekCallBegin);
      break;
    case ToolFamily::kGptOss: add(kHarmonyToFunctions); break;
  }
  return format;
}

ToolFormat detect_tool_format(std::string_view src) {
  ToolFamily family = ToolFamily::kGeneric;
  // The order matters where templates share markers: gpt-oss's channels first (its template
  // mentions no other family's markers), Granite before Phi-4-mini (both write <|tool_call|>).
  if (contains(src, "<|channel|>") && contains(src, "<|message|>")) {
    family = ToolFamily::kGptOss;
  } else if (contains(src, kDeepSeekCallsBegin)) {
    // R1 and V3 fence the arguments as ```json; V3.1 writes them right after the separator.
    family = contains(src, "```json") ? ToolFamily::kDeepSeekR1 : ToolFamily::kDeepSeekV31;
  } else if (contains(src, kMistralToolCalls)) {
    family = contains(src, kMistralArgsMarker) ? ToolFamily::kMistralArgs : ToolFamily::kMistral;
  } else if (contains(src, kGraniteToolCall)) {
    bool granite = contains(src, "<|start_of_role|>");
    family = !granite && (contains(src, kPhi4ToolCallEnd) || contains(src, "<|tool|>"))
                 ? ToolFamily::kPhi4Mini
                 : ToolFamily::kGranite;
  } else if (contains(src, kXmlFunctionOpen) && contains(src, kXmlParameterOpen)) {
    family = ToolFamily::kQwenXml;  // before Hermes: its calls are wrapped in <tool_call> too
  } else if (contains(src, kHermesOpen)) {
    family = ToolFamily::kHermes;
  } else if (contains(src, "<|start_header_id|>") &&
             (contains(src, "<|start_header_id|>ipython<|end_header_id|>") || contains(src, kPythonTag))) {
    family = ToolFamily::kLlama3;
  } else if (contains(src, "<|tool|>") && contains(src, "<|/tool|>")) {
    family = ToolFamily::kPhi4Mini;  // the original Phi-4-mini template answers with functools[...]
  }
  ToolFormat format = tool_format_for(family);
  if (family == ToolFamily::kLlama3) format.python_tag = contains(src, kPythonTag);
  if (family != ToolFamily::kGptOss) {
    if (contains(src, "[THINK]")) {
      format.reasoning_open = "[THINK]";
      format.reasoning_close = "[/THINK]";
    } else if (contains(src, "<think>") || contains(src, "</think>")) {
      format.reasoning_open = "<think>";
      format.reasoning_close = "</think>";
    }
  }
  return format;
}

bool prompt_opens_reasoning(const ToolFormat& format, std::string_view prompt) {
  if (format.reasoning_open.empty()) return false;
  while (!prompt.empty() &&
         (prompt.back() == ' ' || prompt.back() == '\n' || prompt.back() == '\r' || prompt.back() == '\t')) {
    prompt.remove_suffix(1);
  }
  return prompt.ends_with(format.reasoning_open);
}

}  // namespace sinter::chat::tools
