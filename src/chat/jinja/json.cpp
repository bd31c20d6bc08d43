#include "chat/jinja/json.h"

#include <algorithm>
#include <cstdio>

#include "chat/jinja/budget.h"
#include "chat/jinja/errors.h"
#include "chat/jinja/python_ops.h"
#include "core/utf8.h"

namespace sinter::chat::jinja {
namespace {

constexpr int kMaxJsonDepth = 256;

void append_json_string(std::string* out, std::string_view text, bool ensure_ascii) {
  *out += '"';
  size_t pos = 0;
  char buffer[16];
  while (pos < text.size()) {
    auto byte = static_cast<unsigned char>(text[pos]);
    if (byte >= 0x80) {
      size_t start = pos;
      uint32_t c = utf8_decode(text, &pos);
      if (!ensure_ascii) {
        out->append(text.substr(start, pos - start));
      } else if (c >= 0x10000) {
        uint32_t v = c - 0x10000;
        std::snprintf(buffer, sizeof buffer, "\\u%04x\\u%04x", 0xD800 + (v >> 10), 0xDC00 + (v & 0x3FF));
        *out += buffer;
      } else {
        std::snprintf(buffer, sizeof buffer, "\\u%04x", c);
        *out += buffer;
      }
      continue;
    }
    ++pos;
    switch (byte) {
      case '"': *out += "\\\""; break;
      case '\\': *out += "\\\\"; break;
      case '\n': *out += "\\n"; break;
      case '\r': *out += "\\r"; break;
      case '\t': *out += "\\t"; break;
      case '\b': *out += "\\b"; break;
      case '\f': *out += "\\f"; break;
      default:
        if (byte < 0x20) {
          std::snprintf(buffer, sizeof buffer, "\\u%04x", byte);
          *out += buffer;
        } else {
          *out += static_cast<char>(byte);
        }
    }
  }
  *out += '"';
}

std::string json_float(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "Infinity" : "-Infinity";
  return format_float(value);
}

class JsonWriter {
 public:
  explicit JsonWriter(const JsonDumpOptions& options) : options_(options) {
    item_separator_ = options.item_separator.value_or(options.indent ? "," : ", ");
  }

  Status write(const Value& value, int level) {
    if (level > kMaxJsonDepth) return value_error("Circular reference detected");
    // Stop before a list that holds one long string many times fills memory.
    if (out_.size() > value_size_cap())
      return limit_error(concat("tojson would pass ", value_size_cap(), " bytes"));
    switch (value.kind()) {
      case Value::Kind::kNone: out_ += "null"; return ok_status();
      case Value::Kind::kBool: out_ += value.as_bool() ? "true" : "false"; return ok_status();
      case Value::Kind::kInt: out_ += std::to_string(value.as_int()); return ok_status();
      case Value::Kind::kFloat: out_ += json_float(value.as_float()); return ok_status();
      case Value::Kind::kString:
        append_json_string(&out_, value.as_string(), options_.ensure_ascii);
        return ok_status();
      case Value::Kind::kList:
        if (value.is_list() || value.is_tuple()) return write_list(value.items(), level);
        break;
      case Value::Kind::kDict: return write_dict(value.as_dict(), level);
      default: break;
    }
    return type_error(concat("Object of type ", type_name(value), " is not JSON serializable"));
  }

  std::string take() { return std::move(out_); }

 private:
  void newline(int level) {
    if (!options_.indent) return;
    out_ += '\n';
    for (int i = 0; i < level; ++i) out_ += *options_.indent;
  }

  Status write_list(const std::vector<Value>& items, int level) {
    if (items.empty()) {
      out_ += "[]";
      return ok_status();
    }
    out_ += '[';
    for (size_t i = 0; i < items.size(); ++i) {
      if (i) out_ += item_separator_;
      newline(level + 1);
      SINTER_TRY(write(items[i], level + 1));
    }
    newline(level);
    out_ += ']';
    return ok_status();
  }

  static Result<std::string> key_text(const Value& key) {
    switch (key.kind()) {
      case Value::Kind::kString: return key.as_string();
      case Value::Kind::kNone: return std::string("null");
      case Value::Kind::kBool: return std::string(key.as_bool() ? "true" : "false");
      case Value::Kind::kInt: return std::to_string(key.as_int());
      case Value::Kind::kFloat: return json_float(key.as_float());
      default: return type_error(concat("keys must be str, int, float, bool or None, not ", type_name(key)));
    }
  }

  Status write_dict(const Dict& dict, int level) {
    if (dict.empty()) {
      out_ += "{}";
      return ok_status();
    }
    std::vector<std::pair<std::string, const Value*>> entries;
    for (const auto& [k, v] : dict.entries()) {
      SINTER_ASSIGN(std::string key, key_text(k));
      entries.emplace_back(std::move(key), &v);
    }
    if (options_.sort_keys) {
      for (const auto& [k, v] : dict.entries()) {
        if (!k.is_string()) return type_error("'<' not supported between instances of mixed key types");
      }
      std::stable_sort(entries.begin(), entries.end(),
                       [](const auto& a, const auto& b) { return a.first < b.first; });
    }
    out_ += '{';
    for (size_t i = 0; i < entries.size(); ++i) {
      if (i) out_ += item_separator_;
      newline(level + 1);
      append_json_string(&out_, entries[i].first, options_.ensure_ascii);
      out_ += options_.key_separator;
      SINTER_TRY(write(*entries[i].second, level + 1));
    }
    newline(level);
    out_ += '}';
    return ok_status();
  }

  const JsonDumpOptions& options_;
  std::string item_separator_;
  std::string out_;
};

Result<Value> convert(const nlohmann::ordered_json& json, const std::string& where, int depth) {
  if (depth > kMaxJsonDepth) return Error(ErrorCode::kInvalidArgument, where + ": JSON nested too deeply");
  switch (json.type()) {
    case nlohmann::ordered_json::value_t::null:
    case nlohmann::ordered_json::value_t::discarded: return Value::none();
    case nlohmann::ordered_json::value_t::boolean: return Value(json.get<bool>());
    case nlohmann::ordered_json::value_t::number_integer: return Value(json.get<int64_t>());
    case nlohmann::ordered_json::value_t::number_unsigned: {
      auto n = json.get<uint64_t>();
      if (n > static_cast<uint64_t>(INT64_MAX)) return Value(static_cast<double>(n));
      return Value(static_cast<int64_t>(n));
    }
    case nlohmann::ordered_json::value_t::number_float: return Value(json.get<double>());
    case nlohmann::ordered_json::value_t::string: {
      const auto& s = json.get_ref<const std::string&>();
      if (!utf8_is_valid(s)) return Error(ErrorCode::kInvalidArgument, where + ": string is not valid UTF-8");
      return Value(s);
    }
    case nlohmann::ordered_json::value_t::array: {
      std::vector<Value> items;
      items.reserve(json.size());
      for (size_t i = 0; i < json.size(); ++i) {
        SINTER_ASSIGN(Value item, convert(json[i], where + "[" + std::to_string(i) + "]", depth + 1));
        items.push_back(std::move(item));
      }
      return Value::list(std::move(items));
    }
    case nlohmann::ordered_json::value_t::object: {
      auto dict = std::make_shared<Dict>();
      for (const auto& [key, item] : json.items()) {
        if (!utf8_is_valid(key))
          return Error(ErrorCode::kInvalidArgument, where + ": key is not valid UTF-8");
        SINTER_ASSIGN(Value value, convert(item, where + "." + key, depth + 1));
        dict->set(Value(key), std::move(value));
      }
      return Value(std::move(dict));
    }
    case nlohmann::ordered_json::value_t::binary:
      return Error(ErrorCode::kInvalidArgument, where + ": binary JSON values are not supported");
  }
  return Value::none();
}

}  // namespace

Result<Value> from_json(const nlohmann::ordered_json& json, const std::string& where) {
  return convert(json, where, 0);
}

Result<std::string> dump_json(const Value& value, const JsonDumpOptions& options) {
  JsonWriter writer(options);
  SINTER_TRY(writer.write(value, 0));
  return writer.take();
}

}  // namespace sinter::chat::jinja
