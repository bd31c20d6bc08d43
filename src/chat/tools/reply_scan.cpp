#include "chat/tools/reply_scan.h"

namespace sinter::chat::tools {

bool starts_with_at(std::string_view text, size_t pos, std::string_view word) {
  return pos <= text.size() && text.substr(pos).starts_with(word);
}

MarkerFound find_first_marker(std::string_view text, size_t pos, std::span<const std::string_view> markers) {
  MarkerFound first{text.size(), text.size()};
  for (std::string_view marker : markers) {
    const size_t found = text.find(marker, pos);
    if (found < first.begin) first = {found, found + marker.size()};
  }
  return first;
}

size_t held_marker_prefix(std::string_view text, std::span<const std::string_view> markers) {
  size_t held = 0;
  for (std::string_view marker : markers) {
    size_t longest = std::min(marker.size() - (marker.empty() ? 0 : 1), text.size());
    for (size_t n = longest; n > held; --n) {
      if (marker.starts_with(text.substr(text.size() - n))) {
        held = n;
        break;
      }
    }
  }
  return held;
}

size_t skip_markers(std::string_view text, size_t pos, std::initializer_list<std::string_view> markers) {
  for (std::string_view marker : markers) {
    size_t at = skip_json_space(text, pos);
    std::string_view rest = text.substr(at);
    if (rest.starts_with(marker)) {
      pos = at + marker.size();
    } else if (marker.starts_with(rest)) {
      return text.size();  // blanks, or the start of the marker, up to the end
    }
  }
  return pos;
}

CallRead read_call_arguments(std::string_view text, size_t pos, std::string name, ReplyParts& parts) {
  ToolCall call;
  call.name = std::move(name);
  size_t begin = skip_json_space(text, pos);
  CallRead read{CallOutcome::kCall, text.size(), false};
  if (begin < text.size()) {
    ScanResult args = scan_json_value(text, begin);
    size_t end = args.status == ScanStatus::kPartial ? text.size() : args.end;
    call.arguments = std::string(text.substr(begin, end - begin));
    read.end = end;
    read.complete = args.status == ScanStatus::kComplete;
  }
  call.complete = read.complete;
  parts.calls.push_back(std::move(call));
  return read;
}

CallRead read_call_object(std::string_view text, size_t pos, bool name_first, const ParseContext& context,
                          ReplyParts& parts) {
  CallObjectScan scan = scan_call_object(text, pos, name_first);
  if (!scan.name) {
    if (scan.object.status == ScanStatus::kPartial && context.partial)
      return {CallOutcome::kPending, pos, false};
    return {CallOutcome::kNotACall, pos, false};
  }
  ToolCall call;
  call.name = *scan.name;
  bool object_complete = scan.object.status == ScanStatus::kComplete;
  if (!scan.has_arguments) {
    if (object_complete) call.arguments = "{}";
  } else if (scan.arguments_is_string) {
    // Arguments given as a JSON string hold JSON text: shown once the string is whole.
    if (scan.arguments.status == ScanStatus::kComplete) {
      auto decoded =
          decode_json_string(text.substr(scan.arguments_begin, scan.arguments.end - scan.arguments_begin));
      if (decoded) call.arguments = std::move(*decoded);
    }
  } else {
    size_t end = scan.arguments.status == ScanStatus::kPartial ? text.size() : scan.arguments.end;
    call.arguments = std::string(text.substr(scan.arguments_begin, end - scan.arguments_begin));
  }
  call.complete = object_complete;
  parts.calls.push_back(std::move(call));
  size_t end = scan.object.status == ScanStatus::kPartial ? text.size() : scan.object.end;
  return {CallOutcome::kCall, end, object_complete};
}

void read_marked_calls(std::string_view text, size_t pos, std::span<const std::string_view> triggers,
                       const BlockReader& read_block, const ParseContext& context, ReplyParts& parts) {
  while (pos <= text.size()) {
    size_t at = std::string_view::npos;
    std::string_view trigger;
    for (std::string_view t : triggers) {
      size_t found = text.find(t, pos);
      if (found < at) {
        at = found;
        trigger = t;
      }
    }
    if (at == std::string_view::npos) {
      std::string_view rest = text.substr(pos);
      if (context.partial) rest.remove_suffix(held_marker_prefix(rest, triggers));
      parts.content += rest;
      return;
    }
    parts.content += text.substr(pos, at - pos);
    Block block = read_block(text, at, trigger, context, parts);
    if (block.outcome == CallOutcome::kPending) return;
    if (block.outcome == CallOutcome::kNotACall) {
      parts.content += trigger;
      pos = at + trigger.size();
      continue;
    }
    if (block.hold_rest && context.partial) return;
    if (block.end >= text.size()) return;
    pos = block.end;
  }
}

Block read_call_array(std::string_view text, size_t pos, const ParseContext& context, ReplyParts& parts) {
  size_t i = pos + 1;
  bool any = false;
  size_t good_end = pos;
  auto stop_here = [&](bool may_continue) -> Block {
    if (!any) {
      return {may_continue && context.partial ? CallOutcome::kPending : CallOutcome::kNotACall, pos, false};
    }
    return {CallOutcome::kCall, good_end, may_continue};
  };
  while (true) {
    i = skip_json_space(text, i);
    if (i >= text.size()) return stop_here(true);
    if (any && text[i] == ']') return {CallOutcome::kCall, i + 1, false};
    if (text[i] != '{') return stop_here(false);
    CallRead call = read_call_object(text, i, false, context, parts);
    if (call.outcome == CallOutcome::kPending) return stop_here(true);
    if (call.outcome == CallOutcome::kNotACall) return stop_here(false);
    any = true;
    good_end = call.end;
    if (!call.complete) return {CallOutcome::kCall, call.end, false};
    i = skip_json_space(text, call.end);
    if (i >= text.size()) return stop_here(true);
    if (text[i] == ',') {
      ++i;
      continue;
    }
    if (text[i] == ']') return {CallOutcome::kCall, i + 1, false};
    return stop_here(false);
  }
}

}  // namespace sinter::chat::tools
