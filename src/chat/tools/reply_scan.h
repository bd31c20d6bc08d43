// Shared pieces of the per-family reply parsers (internal to src/chat/tools).
//
// Every parser runs in two modes over the same code: final (the reply is whole) and partial (the
// reply so far, for streaming). In partial mode a parser stops where the text could still turn
// out to be part of a marker or of a call whose name is not yet complete ("holds the rest back"),
// so that what it reports never has to be taken back.
#pragma once

#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "chat/tools/json_scan.h"
#include "chat/tools/parsed_message.h"
#include "chat/tools/tool_format.h"

namespace sinter::chat::tools {

struct ParseContext {
  bool partial;
  const ToolFormat& format;
  const ParseOptions& options;
};

// What the parsers collect; ids and trimming are added afterwards.
struct ReplyParts {
  std::string content;
  std::string reasoning;
  std::vector<ToolCall> calls;
};

bool starts_with_at(std::string_view text, size_t pos, std::string_view word);

// Length of the longest end of `text` that is a proper prefix of one of `markers` (what a stream
// holds back because the next piece may complete a marker).
size_t held_marker_prefix(std::string_view text, std::span<const std::string_view> markers);

// The first of `markers` found in `text` from `pos`: where it starts and where it ends (both
// text.size() when none is there).
struct MarkerFound {
  size_t begin;
  size_t end;
};
MarkerFound find_first_marker(std::string_view text, size_t pos, std::span<const std::string_view> markers);

// Skips blanks and then each of `markers` in order where present. A remainder that is a proper
// prefix of the next marker is swallowed (returns text.size()): it can only become that marker,
// and a partial parse must not show it as content.
size_t skip_markers(std::string_view text, size_t pos, std::initializer_list<std::string_view> markers);

// The outcome of trying to read one call.
enum class CallOutcome {
  kNotACall,  // malformed before the name was complete: the text is content
  kPending,   // partial mode: could still become a call; hold from here on
  kCall,      // appended to ReplyParts::calls
};

struct CallRead {
  CallOutcome outcome = CallOutcome::kNotACall;
  size_t end = 0;         // kCall: where the call's text ends (or broke)
  bool complete = false;  // kCall: its JSON is whole
};

// Reads a {"name": ..., "arguments"|"parameters": ...} object at text[pos] == '{'.
CallRead read_call_object(std::string_view text, size_t pos, bool name_first, const ParseContext& context,
                          ReplyParts& parts);

// Appends a call named `name` whose arguments are the JSON value starting at text[pos] (after
// blanks), as far as it goes.
CallRead read_call_arguments(std::string_view text, size_t pos, std::string name, ReplyParts& parts);

// A tool-call block found at a trigger.
struct Block {
  CallOutcome outcome = CallOutcome::kNotACall;
  size_t end = 0;          // kCall: where the scan for the next trigger resumes
  bool hold_rest = false;  // kCall, partial mode: the text after `end` may still belong to the block
};

using BlockReader = std::function<Block(std::string_view text, size_t at, std::string_view trigger,
                                        const ParseContext& context, ReplyParts& parts)>;

// Content with tool-call blocks anywhere in it, each starting at one of `triggers`.
void read_marked_calls(std::string_view text, size_t pos, std::span<const std::string_view> triggers,
                       const BlockReader& read_block, const ParseContext& context, ReplyParts& parts);

// A JSON array of call objects at text[pos] == '[' (Mistral, Granite, Phi-4-mini's functools).
Block read_call_array(std::string_view text, size_t pos, const ParseContext& context, ReplyParts& parts);

// The family parsers, each over the reply after any reasoning block.
void parse_hermes(std::string_view text, const ParseContext& context, ReplyParts& parts);
void parse_qwen_xml(std::string_view text, const ParseContext& context, ReplyParts& parts);
// Hermes' <tool_call> {json} </tool_call> block (Qwen's XML format falls back to it).
Block read_hermes_block(std::string_view text, size_t at, std::string_view trigger,
                        const ParseContext& context, ReplyParts& parts);
void parse_llama3(std::string_view text, const ParseContext& context, ReplyParts& parts);
void parse_mistral(std::string_view text, const ParseContext& context, ReplyParts& parts);
void parse_tool_call_tag(std::string_view text, const ParseContext& context,
                         ReplyParts& parts);  // Granite, Phi-4
void parse_deepseek(std::string_view text, const ParseContext& context, ReplyParts& parts);
void parse_generic(std::string_view text, const ParseContext& context, ReplyParts& parts);
// gpt-oss: channels carry reasoning too, so it parses the whole reply.
void parse_harmony(std::string_view text, const ParseContext& context, ReplyParts& parts);

}  // namespace sinter::chat::tools
