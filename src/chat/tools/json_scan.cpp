#include "chat/tools/json_scan.h"

#include <nlohmann/json.hpp>
#include <vector>

namespace sinter::chat::tools {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_hex(char c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

ScanResult partial(std::string_view text) { return {ScanStatus::kPartial, text.size()}; }
ScanResult invalid(size_t at) { return {ScanStatus::kInvalid, at}; }

// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?, ended by any byte that cannot continue it. A
// number running to the end of the text is partial even when it could stop there.
ScanResult scan_number(std::string_view text, size_t pos) {
  size_t i = pos;
  auto at_end = [&] { return i >= text.size(); };
  if (text[i] == '-') ++i;
  if (at_end()) return partial(text);
  if (text[i] == '0') {
    ++i;
  } else if (is_digit(text[i])) {
    while (!at_end() && is_digit(text[i])) ++i;
  } else {
    return invalid(i);
  }
  if (at_end()) return partial(text);
  if (text[i] == '.') {
    ++i;
    if (at_end()) return partial(text);
    if (!is_digit(text[i])) return invalid(i);
    while (!at_end() && is_digit(text[i])) ++i;
    if (at_end()) return partial(text);
  }
  if (text[i] == 'e' || text[i] == 'E') {
    ++i;
    if (at_end()) return partial(text);
    if (text[i] == '+' || text[i] == '-') ++i;
    if (at_end()) return partial(text);
    if (!is_digit(text[i])) return invalid(i);
    while (!at_end() && is_digit(text[i])) ++i;
    if (at_end()) return partial(text);
  }
  return {ScanStatus::kComplete, i};
}

ScanResult scan_literal(std::string_view text, size_t pos, std::string_view word) {
  for (size_t k = 0; k < word.size(); ++k) {
    if (pos + k >= text.size()) return partial(text);
    if (text[pos + k] != word[k]) return invalid(pos + k);
  }
  return {ScanStatus::kComplete, pos + word.size()};
}

enum class Expect { kValue, kValueOrClose, kKeyOrClose, kKey, kColon, kCommaOrClose };

}  // namespace

bool is_json_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

size_t skip_json_space(std::string_view text, size_t pos) {
  while (pos < text.size() && is_json_space(text[pos])) ++pos;
  return pos;
}

ScanResult scan_json_string(std::string_view text, size_t pos) {
  size_t i = pos + 1;
  while (i < text.size()) {
    auto c = static_cast<unsigned char>(text[i]);
    if (c == '"') return {ScanStatus::kComplete, i + 1};
    if (c < 0x20) return invalid(i);
    if (c != '\\') {
      ++i;
      continue;
    }
    if (i + 1 >= text.size()) return partial(text);
    char e = text[i + 1];
    if (e == 'u') {
      for (size_t k = 0; k < 4; ++k) {
        if (i + 2 + k >= text.size()) return partial(text);
        if (!is_hex(text[i + 2 + k])) return invalid(i + 2 + k);
      }
      i += 6;
    } else if (e == '"' || e == '\\' || e == '/' || e == 'b' || e == 'f' || e == 'n' || e == 'r' ||
               e == 't') {
      i += 2;
    } else {
      return invalid(i + 1);
    }
  }
  return partial(text);
}

ScanResult scan_json_value(std::string_view text, size_t pos) {
  std::vector<char> open;  // '{' or '[' per level
  Expect expect = Expect::kValue;
  size_t i = pos;
  while (true) {
    if (i != pos) i = skip_json_space(text, i);
    if (i >= text.size()) return partial(text);
    char c = text[i];
    bool value_done = false;
    switch (expect) {
      case Expect::kColon:
        if (c != ':') return invalid(i);
        ++i;
        expect = Expect::kValue;
        continue;
      case Expect::kKeyOrClose:
      case Expect::kKey: {
        if (c == '}' && expect == Expect::kKeyOrClose) {
          open.pop_back();
          ++i;
          value_done = true;
          break;
        }
        if (c != '"') return invalid(i);
        ScanResult key = scan_json_string(text, i);
        if (key.status != ScanStatus::kComplete) return key;
        i = key.end;
        expect = Expect::kColon;
        continue;
      }
      case Expect::kCommaOrClose:
        if (c == ',') {
          ++i;
          expect = open.back() == '{' ? Expect::kKey : Expect::kValue;
          continue;
        }
        if ((c == '}' && open.back() == '{') || (c == ']' && open.back() == '[')) {
          open.pop_back();
          ++i;
          value_done = true;
          break;
        }
        return invalid(i);
      case Expect::kValueOrClose:
        if (c == ']') {
          open.pop_back();
          ++i;
          value_done = true;
          break;
        }
        [[fallthrough]];
      case Expect::kValue: {
        if (c == '{' || c == '[') {
          if (open.size() >= kMaxJsonDepth) return invalid(i);
          open.push_back(c);
          ++i;
          expect = c == '{' ? Expect::kKeyOrClose : Expect::kValueOrClose;
          continue;
        }
        ScanResult scalar;
        if (c == '"') {
          scalar = scan_json_string(text, i);
        } else if (c == '-' || is_digit(c)) {
          scalar = scan_number(text, i);
        } else if (c == 't') {
          scalar = scan_literal(text, i, "true");
        } else if (c == 'f') {
          scalar = scan_literal(text, i, "false");
        } else if (c == 'n') {
          scalar = scan_literal(text, i, "null");
        } else {
          return invalid(i);
        }
        if (scalar.status != ScanStatus::kComplete) return scalar;
        i = scalar.end;
        value_done = true;
        break;
      }
    }
    if (value_done) {
      if (open.empty()) return {ScanStatus::kComplete, i};
      expect = Expect::kCommaOrClose;
    }
  }
}

std::optional<std::string> decode_json_string(std::string_view literal) {
  auto value = nlohmann::json::parse(literal, nullptr, /*allow_exceptions=*/false);
  if (!value.is_string()) return std::nullopt;
  return value.get<std::string>();
}

CallObjectScan scan_call_object(std::string_view text, size_t pos, bool name_first) {
  CallObjectScan result;
  size_t i = pos + 1;
  bool first = true;
  while (true) {
    i = skip_json_space(text, i);
    if (i >= text.size()) return result.object = partial(text), result;
    if (text[i] == '}' && first && !name_first) {
      result.object = {ScanStatus::kComplete, i + 1};
      return result;
    }
    if (text[i] != '"') return result.object = invalid(i), result;
    ScanResult key_scan = scan_json_string(text, i);
    if (key_scan.status != ScanStatus::kComplete) return result.object = key_scan, result;
    auto key = decode_json_string(text.substr(i, key_scan.end - i));
    if (!key) return result.object = invalid(i), result;
    if (first && name_first && *key != "name" && *key != "type") return result.object = invalid(i), result;
    first = false;
    i = skip_json_space(text, key_scan.end);
    if (i >= text.size()) return result.object = partial(text), result;
    if (text[i] != ':') return result.object = invalid(i), result;
    i = skip_json_space(text, i + 1);
    if (i >= text.size()) return result.object = partial(text), result;
    // The first arguments win: a duplicate key must not replace arguments already streamed.
    bool is_arguments = (*key == "arguments" || *key == "parameters") && !result.has_arguments;
    if (is_arguments) {
      result.has_arguments = true;
      result.arguments_begin = i;
      result.arguments_is_string = text[i] == '"';
    }
    ScanResult value = scan_json_value(text, i);
    if (is_arguments) result.arguments = value;
    if (value.status != ScanStatus::kComplete) return result.object = value, result;
    if (*key == "name") {
      auto name = decode_json_string(text.substr(i, value.end - i));
      if (!name || name->empty()) return result.object = invalid(i), result;
      // A later duplicate cannot rename a call whose name may already have been streamed.
      if (!result.name) result.name = std::move(name);
    }
    i = skip_json_space(text, value.end);
    if (i >= text.size()) return result.object = partial(text), result;
    if (text[i] == ',') {
      ++i;
      continue;
    }
    if (text[i] == '}') {
      result.object = {ScanStatus::kComplete, i + 1};
      return result;
    }
    return result.object = invalid(i), result;
  }
}

}  // namespace sinter::chat::tools
