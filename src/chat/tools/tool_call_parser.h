// Parsing a model's reply into content, reasoning and tool calls, per tool-call family
// (docs/TOOL_CALLS.md).
//
// Whole reply (non-streamed):
//   ParsedMessage message = parse_reply(format, generated_text, options);
// Streamed: see streaming_parser.h, whose deltas add up to exactly this result.
//
// A reply never fails to parse: text that is not a well-formed call of the family (a marker
// followed by something else, JSON that breaks before the call's name is complete) stays
// content, byte for byte.
#pragma once

#include <string_view>

#include "chat/tools/parsed_message.h"
#include "chat/tools/tool_format.h"

namespace sinter::chat::tools {

ParsedMessage parse_reply(const ToolFormat& format, std::string_view text, const ParseOptions& options = {});

// The reply so far as a stream may show it: what could still turn out to be part of a marker or
// of a call whose name is not yet complete is held back, and so is trailing blank text. Every
// field of the result is a prefix of the same field of parse_reply on any continuation of
// `text` (the streaming parser relies on it; the tests check it for every split).
ParsedMessage parse_partial_reply(const ToolFormat& format, std::string_view text,
                                  const ParseOptions& options = {});

}  // namespace sinter::chat::tools
