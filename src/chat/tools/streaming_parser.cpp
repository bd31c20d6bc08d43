#include "chat/tools/streaming_parser.h"

#include "chat/tools/tool_call_parser.h"
#include "core/utf8.h"

namespace sinter::chat::tools {
namespace {

// What `now` adds to `sent` (appended to it), if `now` extends it; in a partial step an
// incomplete UTF-8 character at the end waits.
std::string grow(const std::string& now, std::string& sent, bool final) {
  if (now.size() <= sent.size() || now.compare(0, sent.size(), sent) != 0) return {};
  std::string_view added = std::string_view(now).substr(sent.size());
  if (!final) added.remove_suffix(utf8_incomplete_tail(added));
  sent.append(added);
  return std::string(added);
}

}  // namespace

StreamingParser::StreamingParser(ToolFormat format, ParseOptions options)
    : format_(std::move(format)), options_(std::move(options)) {}

MessageDelta StreamingParser::push(std::string_view piece) {
  if (finished_ || piece.empty()) return {};
  text_.append(piece);
  return advance(parse_partial_reply(format_, text_, options_), /*final=*/false);
}

MessageDelta StreamingParser::finish() {
  if (finished_) return {};
  finished_ = true;
  ParsedMessage whole = parse_reply(format_, text_, options_);
  MessageDelta delta = advance(whole, /*final=*/true);
  // The completeness of a call is only known at the end.
  for (size_t i = 0; i < whole.tool_calls.size() && i < sent_.tool_calls.size(); ++i) {
    sent_.tool_calls[i].complete = whole.tool_calls[i].complete;
  }
  return delta;
}

MessageDelta StreamingParser::advance(const ParsedMessage& now, bool final) {
  MessageDelta delta;
  delta.content = grow(now.content, sent_.content, final);
  delta.reasoning_content = grow(now.reasoning_content, sent_.reasoning_content, final);
  for (size_t i = 0; i < now.tool_calls.size(); ++i) {
    const ToolCall& call = now.tool_calls[i];
    ToolCallDelta call_delta;
    call_delta.index = i;
    if (i >= sent_.tool_calls.size()) {
      ToolCall started;
      started.id = call.id;
      started.name = call.name;
      started.complete = false;
      sent_.tool_calls.push_back(std::move(started));
      call_delta.id = call.id;
      call_delta.name = call.name;
    }
    call_delta.arguments = grow(call.arguments, sent_.tool_calls[i].arguments, final);
    if (!call_delta.name.empty() || !call_delta.arguments.empty())
      delta.tool_calls.push_back(std::move(call_delta));
  }
  return delta;
}

}  // namespace sinter::chat::tools
