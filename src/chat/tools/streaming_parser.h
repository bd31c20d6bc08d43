// Streaming a reply's content, reasoning and tool calls as they are generated.
//
//   StreamingParser parser(format, options);
//   for each generated piece:  MessageDelta delta = parser.push(piece);   // send if !delta.empty()
//   at the end of generation:  MessageDelta last = parser.finish();       // send if !last.empty()
//   parser.message()  // == parse_reply(format, all text, options)
//
// The deltas add up to exactly parse_reply of the whole text, however the text was split: text
// that may still become part of a marker (a prefix of "<tool_call>", of "</think>"), a call whose
// name is not yet complete, blanks at the end of a field and a split UTF-8 character are held
// back until the next piece decides them. Each push re-parses the reply so far (linear in its
// length), as llama.cpp's server does; replies are short next to the cost of generating them.
#pragma once

#include <string>
#include <string_view>

#include "chat/tools/parsed_message.h"
#include "chat/tools/tool_format.h"

namespace sinter::chat::tools {

class StreamingParser {
 public:
  explicit StreamingParser(ToolFormat format, ParseOptions options = {});

  // The delta that the reply so far adds to what was sent before.
  MessageDelta push(std::string_view piece);
  // The rest, now that the reply is whole. Later pushes are ignored.
  MessageDelta finish();

  const std::string& text() const { return text_; }
  // What the deltas have sent so far (after finish(): the whole parsed reply).
  const ParsedMessage& message() const { return sent_; }
  bool finished() const { return finished_; }

 private:
  MessageDelta advance(const ParsedMessage& now, bool final);

  ToolFormat format_;
  ParseOptions options_;
  std::string text_;
  ParsedMessage sent_;
  bool finished_ = false;
};

}  // namespace sinter::chat::tools
