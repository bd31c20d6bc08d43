// DeepSeek V3 / R1 and V3.1:
//   <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\n```json\n{...}\n```<｜tool▁call▁end｜>
//   ...<｜tool▁calls▁end｜>                                               (V3, R1)
//   <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{...}<｜tool▁call▁end｜>...   (V3.1)
// Both are read whichever template was detected: R1 distillations mix them up.
#include <array>

#include "chat/tools/markers.h"
#include "chat/tools/reply_scan.h"

namespace sinter::chat::tools {
namespace {

constexpr size_t kMaxHeader = 256;  // bytes between a call's begin marker and its name's end

std::string_view trim(std::string_view s) {
  size_t b = skip_json_space(s, 0);
  size_t e = s.size();
  while (e > b && is_json_space(s[e - 1])) --e;
  return s.substr(b, e - b);
}

bool plausible_name(std::string_view name) {
  if (name.empty() || name.size() > kMaxHeader) return false;
  for (char c : name) {
    if (c == '<' || c == '>' || c == '\n' || c == '{' || c == '"') return false;
  }
  return true;
}

Block read_deepseek_block(std::string_view text, size_t at, std::string_view trigger,
                          const ParseContext& context, ReplyParts& parts) {
  const Block pending{context.partial ? CallOutcome::kPending : CallOutcome::kNotACall, at, false};
  size_t p = trigger == kDeepSeekCallsBegin ? skip_json_space(text, at + trigger.size()) : at;
  bool any = false;
  size_t good_end = at;
  auto stop_here = [&](bool may_continue) -> Block {
    if (!any) return may_continue ? pending : Block{};
    return {CallOutcome::kCall, good_end, may_continue};
  };
  while (true) {
    std::string_view rest = text.substr(std::min(p, text.size()));
    if (!rest.starts_with(kDeepSeekCallBegin)) return stop_here(kDeepSeekCallBegin.starts_with(rest));
    size_t header = p + kDeepSeekCallBegin.size();
    // Searched within the header's bound only: a reply of many begin markers stays linear.
    size_t window = std::min(text.size() - header, kMaxHeader + kDeepSeekSep.size());
    size_t sep = text.substr(header, window).find(kDeepSeekSep);
    if (sep != std::string_view::npos) sep += header;
    if (sep == std::string_view::npos || sep - header > kMaxHeader) {
      bool may_continue = sep == std::string_view::npos && text.size() - header <= kMaxHeader;
      return stop_here(may_continue);
    }
    std::string_view first = trim(text.substr(header, sep - header));
    size_t after_sep = sep + kDeepSeekSep.size();
    std::string name;
    size_t args_at;
    if (first == "function") {
      size_t newline = text.substr(after_sep, std::min(text.size() - after_sep, kMaxHeader + 1)).find('\n');
      if (newline != std::string_view::npos) newline += after_sep;
      if (newline == std::string_view::npos) return stop_here(text.size() - after_sep <= kMaxHeader);
      name = std::string(trim(text.substr(after_sep, newline - after_sep)));
      args_at = skip_json_space(text, newline + 1);
      // The ```json fence; a partial fence at the end of the text waits for the rest.
      constexpr std::string_view kFence = "```json";
      std::string_view fence = text.substr(args_at);
      if (fence.size() < kFence.size() && kFence.starts_with(fence)) {
        return stop_here(plausible_name(name));
      } else if (fence.starts_with(kFence)) {
        args_at += kFence.size();
      } else if (fence.starts_with("```")) {
        args_at += 3;
      }
    } else {
      name = std::string(first);
      args_at = after_sep;
    }
    if (!plausible_name(name)) return stop_here(false);
    CallRead call = read_call_arguments(text, args_at, std::move(name), parts);
    any = true;
    good_end = call.end;
    if (!call.complete) return {CallOutcome::kCall, call.end, false};
    size_t after = skip_markers(text, call.end, {"```", kDeepSeekCallEnd});
    good_end = after;
    size_t next = skip_json_space(text, after);
    if (after < text.size() && starts_with_at(text, next, kDeepSeekCallBegin)) {
      p = next;
      continue;
    }
    std::string_view tail = text.substr(next);
    if (context.partial && !tail.empty() && kDeepSeekCallBegin.starts_with(tail)) return stop_here(true);
    good_end = skip_markers(text, after, {kDeepSeekCallsEnd});
    return {CallOutcome::kCall, good_end, false};
  }
}

}  // namespace

void parse_deepseek(std::string_view text, const ParseContext& context, ReplyParts& parts) {
  const std::array<std::string_view, 2> triggers{kDeepSeekCallsBegin, kDeepSeekCallBegin};
  read_marked_calls(text, 0, triggers, read_deepseek_block, context, parts);
}

}  // namespace sinter::chat::tools
