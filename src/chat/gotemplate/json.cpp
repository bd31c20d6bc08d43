#include "chat/gotemplate/json.h"

#include <cmath>

#include "chat/gotemplate/fmt.h"
#include "core/json_parse.h"
#include "core/utf8.h"

namespace sinter::chat::gotemplate {
namespace {

const char* const kHex = "0123456789abcdef";

void encode_string(std::string* out, std::string_view s) {
  *out += '"';
  for (size_t i = 0; i < s.size();) {
    auto b = static_cast<unsigned char>(s[i]);
    if (b < 0x80) {
      switch (b) {
        case '"': *out += "\\\""; break;
        case '\\': *out += "\\\\"; break;
        case '\n': *out += "\\n"; break;
        case '\r': *out += "\\r"; break;
        case '\t': *out += "\\t"; break;
        case '\b': *out += "\\b"; break;  // Go 1.22+ (older Go writes \u0008)
        case '\f': *out += "\\f"; break;  // Go 1.22+ (older Go writes \u000c)
        case '<':
        case '>':
        case '&':
        default:
          if (b < 0x20 || b == '<' || b == '>' || b == '&') {
            *out += "\\u00";
            *out += kHex[b >> 4];
            *out += kHex[b & 0xF];
          } else {
            *out += static_cast<char>(b);
          }
      }
      ++i;
      continue;
    }
    size_t next = i;
    char32_t r = utf8_decode(s, &next);
    if (r == 0xFFFD && next - i == 1) {
      *out += "\\ufffd";
    } else if (r == 0x2028 || r == 0x2029) {
      *out += r == 0x2028 ? "\\u2028" : "\\u2029";
    } else {
      out->append(s.substr(i, next - i));
    }
    i = next;
  }
  *out += '"';
}

std::string base64(std::string_view bytes) {
  static const char* const kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    uint32_t n = (static_cast<unsigned char>(bytes[i]) << 16) |
                 (static_cast<unsigned char>(bytes[i + 1]) << 8) | static_cast<unsigned char>(bytes[i + 2]);
    for (int k = 18; k >= 0; k -= 6) out += kAlphabet[(n >> k) & 63];
  }
  if (i < bytes.size()) {
    uint32_t n = static_cast<unsigned char>(bytes[i]) << 16;
    if (i + 1 < bytes.size()) n |= static_cast<unsigned char>(bytes[i + 1]) << 8;
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += i + 1 < bytes.size() ? kAlphabet[(n >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

bool is_empty_value(const Value& v) {
  switch (v.kind()) {
    case Kind::kString:
    case Kind::kSlice:
    case Kind::kMap: return v.len() == 0;
    case Kind::kBool: return !v.as_bool();
    case Kind::kInt:
    case Kind::kUint8: return v.as_int() == 0;
    case Kind::kFloat: return v.as_float() == 0;
    case Kind::kPointer:
    case Kind::kInterface: return v.is_nil();
    default: return false;
  }
}

bool encode(std::string* out, const Value& v);

bool encode_float(std::string* out, double f) {
  if (std::isnan(f) || std::isinf(f)) return false;
  double a = std::fabs(f);
  if (a != 0 && (a < 1e-6 || a >= 1e21)) {
    std::string s = go_format_float_shortest(f, 'e');
    // e-09 → e-9
    size_t n = s.size();
    if (n >= 4 && s[n - 4] == 'e' && s[n - 3] == '-' && s[n - 2] == '0') s.erase(n - 2, 1);
    *out += s;
  } else {
    *out += go_format_float_shortest(f, 'f');
  }
  return true;
}

bool encode_map_entries(std::string* out, const MapEntries& entries) {
  *out += '{';
  bool first = true;
  for (const auto& [key, value] : entries) {
    if (!first) *out += ',';
    first = false;
    encode_string(out, key);
    *out += ':';
    if (!encode(out, value)) return false;
  }
  *out += '}';
  return true;
}

bool encode(std::string* out, const Value& v) {
  const Type* type = v.type();
  if (type != nullptr && type->marshaler == Marshaler::kPropertyType) {
    if (v.len() == 1) {
      encode_string(out, v.index(0).as_string());
      return true;
    }
  }
  if (type != nullptr && type->marshaler == Marshaler::kOrderedMap) {
    if (v.is_nil()) {
      *out += "null";
      return true;
    }
    const Value& target = v.elem();
    if (target.is_nil()) {
      *out += "null";
      return true;
    }
    return encode_map_entries(out, target.entries());
  }
  switch (v.kind()) {
    case Kind::kInvalid: *out += "null"; return true;
    case Kind::kBool: *out += v.as_bool() ? "true" : "false"; return true;
    case Kind::kInt:
    case Kind::kUint8: *out += std::to_string(v.as_int()); return true;
    case Kind::kFloat: return encode_float(out, v.as_float());
    case Kind::kString: encode_string(out, v.as_string()); return true;
    case Kind::kSlice:
      if (v.is_nil()) {
        *out += "null";
        return true;
      }
      if (type->is_bytes()) {
        *out += '"' + base64(v.as_string()) + '"';
        return true;
      }
      *out += '[';
      for (size_t i = 0; i < v.len(); ++i) {
        if (i > 0) *out += ',';
        if (!encode(out, v.index(i))) return false;
      }
      *out += ']';
      return true;
    case Kind::kMap:
      if (v.is_nil()) {
        *out += "null";
        return true;
      }
      return encode_map_entries(out, v.entries());
    case Kind::kStruct: {
      *out += '{';
      bool first = true;
      for (size_t i = 0; i < type->fields.size(); ++i) {
        const Field& field = type->fields[i];
        if (field.omit_empty && is_empty_value(v.field(i))) continue;
        if (!first) *out += ',';
        first = false;
        encode_string(out, field.json_name);
        *out += ':';
        if (!encode(out, v.field(i))) return false;
      }
      *out += '}';
      return true;
    }
    case Kind::kPointer:
    case Kind::kInterface:
      if (v.is_nil()) {
        *out += "null";
        return true;
      }
      return encode(out, v.elem());
  }
  return false;
}

}  // namespace

std::optional<std::string> go_json_marshal(const Value& v) {
  std::string out;
  if (!encode(&out, v)) return std::nullopt;
  return out;
}

std::string stringer_text(const Value& v) {
  switch (v.type()->stringer) {
    case Stringer::kNone: return "";
    case Stringer::kJsonNilAsEmptyObject:
      if (v.is_nil()) return "{}";
      [[fallthrough]];
    case Stringer::kJson: return go_json_marshal(v).value_or("");
    case Stringer::kPropertyType: {
      if (v.len() == 0) return "";
      if (v.len() == 1) return v.index(0).as_string();
      // fmt.Sprintf("%v", []string(pt))
      std::vector<Value> as_strings;
      for (size_t i = 0; i < v.len(); ++i) as_strings.push_back(v.index(i));
      return go_sprintf("%v", {Value::slice(&basic_types().slice_string, std::move(as_strings))});
    }
  }
  return "";
}

Value value_from_json(const nlohmann::ordered_json& json, int depth) {
  // JSON from outside is no deeper than the parser admits (core/json_parse.h); anything deeper
  // that reaches here is cut off rather than recursed into.
  if (depth > kMaxJsonDepth) return Value();
  const BasicTypes& basic = basic_types();
  switch (json.type()) {
    case nlohmann::ordered_json::value_t::null:
    case nlohmann::ordered_json::value_t::discarded: return Value();
    case nlohmann::ordered_json::value_t::boolean: return Value::boolean(json.get<bool>());
    case nlohmann::ordered_json::value_t::number_integer:
      return Value::float64(static_cast<double>(json.get<int64_t>()));
    case nlohmann::ordered_json::value_t::number_unsigned:
      return Value::float64(static_cast<double>(json.get<uint64_t>()));
    case nlohmann::ordered_json::value_t::number_float: return Value::float64(json.get<double>());
    case nlohmann::ordered_json::value_t::string: return Value::string(json.get<std::string>());
    case nlohmann::ordered_json::value_t::binary: return Value();
    case nlohmann::ordered_json::value_t::array: {
      std::vector<Value> items;
      items.reserve(json.size());
      for (const auto& item : json) items.push_back(Value::any(value_from_json(item, depth + 1)));
      return Value::slice(&basic.slice_any, std::move(items));
    }
    case nlohmann::ordered_json::value_t::object: {
      MapEntries entries;
      entries.reserve(json.size());
      for (const auto& [key, item] : json.items())
        entries.emplace_back(key, Value::any(value_from_json(item, depth + 1)));
      return Value::map(&basic.map_any, std::move(entries));
    }
  }
  return Value();
}

}  // namespace sinter::chat::gotemplate
