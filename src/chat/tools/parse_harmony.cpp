// gpt-oss's harmony format. The generation prompt ends with "<|start|>assistant", so a reply is a
// run of messages, each a header, <|message|>, a body and an end marker:
//   <|channel|>analysis<|message|>thinking...<|end|>
//   <|start|>assistant<|channel|>commentary to=functions.get_weather
//   <|constrain|>json<|message|>{...}<|call|>
//   <|start|>assistant to=functions.f<|channel|>commentary json<|message|>{...}<|call|>
//   <|channel|>final<|message|>the answer<|return|>
// analysis is reasoning, a recipient functions.NAME makes a tool call, final (and commentary
// without a recipient, a preamble to calls) is content. A call is shown as soon as its header is
// whole; its arguments stream as its body arrives.
#include <array>

#include "chat/tools/markers.h"
#include "chat/tools/reply_scan.h"

namespace sinter::chat::tools {
namespace {

constexpr size_t kMaxHeader = 512;
constexpr std::array<std::string_view, 3> kBodyEnds{kHarmonyEnd, kHarmonyCall, kHarmonyReturn};
constexpr std::string_view kFunctionsPrefix = "functions.";

// The word after `key` in a header ("<|channel|>analysis", "to=functions.f"), up to a blank or '<'.
std::string_view header_word(std::string_view header, std::string_view key) {
  size_t at = header.find(key);
  if (at == std::string_view::npos) return {};
  size_t begin = at + key.size();
  size_t end = begin;
  while (end < header.size() && header[end] != ' ' && header[end] != '<' && header[end] != '\n') ++end;
  return header.substr(begin, end - begin);
}

constexpr std::array<std::string_view, 3> kHeaderStarts{kHarmonyChannel, " to=", "to="};

bool starts_header(std::string_view rest) {
  for (std::string_view start : kHeaderStarts) {
    if (rest.starts_with(start)) return true;
  }
  return false;
}

// Whether text that has no <|message|> yet may still become a header.
bool may_become_header(std::string_view rest) {
  if (rest.size() > kMaxHeader) return false;
  for (std::string_view start : kHeaderStarts) {
    if (rest.starts_with(start) || start.starts_with(rest)) return true;
  }
  return false;
}

void append_part(std::string& out, std::string_view body) {
  if (!out.empty()) out += '\n';
  out += body;
}

std::string_view trim(std::string_view s) {
  size_t b = skip_json_space(s, 0);
  size_t e = s.size();
  while (e > b && is_json_space(s[e - 1])) --e;
  return s.substr(b, e - b);
}

}  // namespace

void parse_harmony(std::string_view text, const ParseContext& context, ReplyParts& parts) {
  size_t p = 0;
  while (p < text.size()) {
    // A message may restate its role: <|start|>assistant.
    if (starts_with_at(text, p, kHarmonyStart)) {
      size_t role_end = p + kHarmonyStart.size();
      while (role_end < text.size() && text[role_end] != '<' && text[role_end] != ' ') ++role_end;
      if (role_end >= text.size()) return;  // nothing of it is content
      p = role_end;
    } else if (context.partial && kHarmonyStart.starts_with(text.substr(p))) {
      return;
    }
    size_t message = text.find(kHarmonyMessage, p);
    if (message == std::string_view::npos || message - p > kMaxHeader) {
      std::string_view rest = text.substr(p);
      if (context.partial && may_become_header(rest)) return;
      parts.content += rest;
      return;
    }
    std::string_view header = text.substr(p, message - p);
    if (!starts_header(header) || header.find(kHarmonyChannel) == std::string_view::npos) {
      parts.content += text.substr(p);  // not harmony: plain text
      return;
    }
    std::string_view channel = header_word(header, kHarmonyChannel);
    std::string_view recipient = header_word(header, "to=");
    size_t body_begin = message + kHarmonyMessage.size();
    const auto [body_end, next] = find_first_marker(text, body_begin, kBodyEnds);
    bool closed = body_end < text.size();
    std::string_view body = text.substr(body_begin, body_end - body_begin);
    if (!closed && context.partial) body.remove_suffix(held_marker_prefix(body, kBodyEnds));
    if (recipient.starts_with(kFunctionsPrefix) && recipient.size() > kFunctionsPrefix.size()) {
      ToolCall call;
      call.name = std::string(recipient.substr(kFunctionsPrefix.size()));
      call.arguments = std::string(trim(body));
      ScanResult scan = scan_json_value(call.arguments, 0);
      call.complete = closed && scan.status == ScanStatus::kComplete && scan.end == call.arguments.size();
      parts.calls.push_back(std::move(call));
    } else if (channel == "analysis") {
      append_part(parts.reasoning, body);
    } else {
      append_part(parts.content, body);
    }
    p = next;
  }
}

}  // namespace sinter::chat::tools
