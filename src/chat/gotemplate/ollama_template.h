// Ollama's prompt templates: Go text/template sources (`{{ .Prompt }}`, `{{ range .Messages }}`)
// rendered exactly as Ollama's template package renders them.
//
// What Ollama does, and this does too (template/template.go in Ollama):
// - parses with Option("missingkey=zero") and the functions json, currentDate, yesterdayDate and
//   toTypeScriptType; a template that mentions neither .Messages nor .Response gets
//   `{{ .Response }}` appended;
// - merges consecutive messages of the same role (except "tool") with "\n\n", and joins all
//   system messages into .System;
// - with a prompt and a suffix (fill-in-the-middle), renders {Prompt, Suffix, Response: "", Think…};
// - when the template mentions .Messages, renders {System, Messages, Tools, Response: "", Think…}
//   once, with each message as Ollama's templateMessage (Role, Content, Thinking, Images,
//   ToolCalls[].Function{Index, Name, Arguments}, ToolName, ToolCallID) and tools as its
//   templateTool (Type, Items, Function{Name, Description, Parameters{Type, Defs, Items, Required,
//   Properties}}), whose String() methods print JSON;
// - otherwise (a "legacy" template) renders it once per system/user/assistant turn with .System,
//   .Prompt and .Response, and the last turn with everything after the first .Response cut off
//   (and without Ollama's functions, as Ollama does).
//
//   SINTER_ASSIGN(auto tmpl, chat::OllamaTemplate::parse(modelfile_template));
//   chat::OllamaTemplateData data;
//   data.messages = {{.role = "user", .content = "Hi"}};
//   SINTER_ASSIGN(std::string prompt, tmpl.render(data));
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sinter/result.h"

namespace sinter::chat {

namespace gotemplate {
struct Tree;
}

struct OllamaToolCall {
  std::string id;
  int index = 0;
  std::string name;
  nlohmann::ordered_json arguments;  // an object; null when the call had none
};

struct OllamaMessage {
  std::string role;  // lower case, as Ollama stores it
  std::string content;
  std::string thinking;
  std::vector<std::string> images;  // raw image bytes (Ollama decodes the request's base64)
  std::vector<OllamaToolCall> tool_calls;
  std::string tool_name;
  std::string tool_call_id;
};

struct OllamaTemplateData {
  std::vector<OllamaMessage> messages;
  // null: no tools (the template sees nil); otherwise the request's array of
  // {"type", "items"?, "function": {"name", "description", "parameters": {"type", "$defs"?,
  //  "items"?, "required"?, "properties": {name: {"type", "description", "enum", ...}}}}}.
  nlohmann::ordered_json tools;
  std::string prompt;  // with `suffix`: a fill-in-the-middle request
  std::string suffix;
  bool think = false;
  std::string think_level;  // "high", "medium", "low" when think was given as a level
  bool is_think_set = false;
  // The clock of currentDate/yesterdayDate (local time); unset: now.
  std::optional<std::chrono::system_clock::time_point> now;
};

// A request's messages ([{"role", "content", "thinking", "images" (base64), "tool_calls":
// [{"id", "function": {"index", "name", "arguments"}}], "tool_name", "tool_call_id"}]) as Ollama
// decodes them (role lower-cased). Errors name the message and field.
Result<std::vector<OllamaMessage>> ollama_messages_from_json(const nlohmann::ordered_json& messages);

// Bounds on one render; exceeding one is an error whose message starts with
// "template: rendering budget exceeded".
struct RenderLimits {
  size_t max_output_bytes = 8u << 20;
  size_t max_value_bytes = 32u << 20;  // bytes of all strings template functions produce
  uint64_t max_steps = 10'000'000;     // template nodes walked and commands evaluated
  int max_template_depth = 100;        // nested {{template}} calls
};

class OllamaTemplate {
 public:
  // Parses like Ollama's template.Parse. Errors are Go's messages: "template: :LINE: ...".
  static Result<OllamaTemplate> parse(std::string_view source);

  // Renders like Ollama's Template.Execute. Errors are Go's messages:
  // "template: :LINE:COL: executing \"\" at <.Foo>: ...".
  Result<std::string> render(const OllamaTemplateData& data, const RenderLimits& limits = {}) const;

  const std::string& source() const;
  // Whether the template mentions .Messages (else it renders turn by turn).
  bool uses_messages() const;

 private:
  struct Parsed;
  std::shared_ptr<const Parsed> parsed_;
};

// Parse and render in one step.
Result<std::string> render_ollama_template(std::string_view source, const OllamaTemplateData& data,
                                           const RenderLimits& limits = {});

// Whether `source` is a Go template rather than a Jinja one: it has an action that starts with
// `.`, `$`, a comment or a Go keyword (`{{ .Prompt }}`, `{{- range .Messages }}`, `{{ end }}`),
// and no Jinja statement (`{% ... %}`) or comment (`{# ... #}`).
bool looks_like_go_template(std::string_view source);

}  // namespace sinter::chat
