// What the tool-call parsers make of a model's reply: the OpenAI message shape (content,
// reasoning_content, tool_calls), whole or as streamed deltas.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace sinter::chat::tools {

struct ToolCall {
  std::string id;  // ParseOptions::call_id_prefix + the call's index in the reply
  std::string name;
  std::string arguments;  // JSON text, as the model wrote it ("{}" when it wrote none)
  // False when the reply ended (or the JSON broke) before the arguments were whole: a call is
  // kept once its name is complete, since a streamed reply has already sent it.
  bool complete = true;

  bool operator==(const ToolCall&) const = default;
};

struct ParsedMessage {
  std::string content;            // the answer, blanks at both ends trimmed
  std::string reasoning_content;  // the thinking, trimmed; empty without reasoning
  std::vector<ToolCall> tool_calls;

  bool operator==(const ParsedMessage&) const = default;
};

// One step of a streamed reply. A call's first delta carries its id and name; later ones only
// argument text to append (OpenAI's tool_calls[].function.arguments deltas).
struct ToolCallDelta {
  size_t index = 0;
  std::string id;    // set on the call's first delta only
  std::string name;  // set on the call's first delta only
  std::string arguments;

  bool operator==(const ToolCallDelta&) const = default;
};

struct MessageDelta {
  std::string content;
  std::string reasoning_content;
  std::vector<ToolCallDelta> tool_calls;

  bool empty() const { return content.empty() && reasoning_content.empty() && tool_calls.empty(); }
};

struct ParseOptions {
  // Separate reasoning from the answer. False (Ollama's think: false): the reply is all content.
  bool reasoning = true;
  // The prompt already opened the reasoning block (prompt_opens_reasoning): the reply starts
  // inside it, and everything before the closing tag is reasoning.
  bool reasoning_open_in_prompt = false;
  // Look for tool calls. False (a request without tools): after the reasoning, the reply is all
  // content, whatever it looks like (gpt-oss's channels are still read).
  bool tool_calls = true;
  // Ids are this prefix + the call's index. Models' own ids are not used: Mistral's array form
  // writes its "id" after the arguments, too late for a stream that has sent the call. A server
  // makes the prefix unique per reply (Mistral's templates want ids of 9 or more characters).
  std::string call_id_prefix = "call_";
  // Formats whose argument values are bare text (Qwen3-Coder's XML parameters): the JSON types
  // of each tool's parameters, from the request's tools (tool → parameter → "string", "integer",
  // ...; several for a union). A value whose parameter takes strings stays a string; any other is
  // read as JSON where it is a JSON value of a type the parameter takes (of any type when its
  // types are unknown), else kept as a string.
  std::map<std::string, std::map<std::string, std::vector<std::string>>> parameter_types;
};

}  // namespace sinter::chat::tools
