#include "sample/json_schema/gbnf_rules.h"

#include <cstdio>

#include "core/utf8.h"
#include "sample/json_schema/primitives.h"

namespace sinter::json_schema {
namespace {

std::string hex_escape(uint32_t code_point) {
  char buffer[16];
  std::snprintf(buffer, sizeof buffer, "\\x%02X", static_cast<unsigned>(code_point));
  return buffer;
}

Error limit_error(const char* what, size_t limit) {
  return make_error(ErrorCode::kUnsupported, "schema too large: the grammar would exceed ", limit, " ", what);
}

}  // namespace

std::string gbnf_literal(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '"') {
      out += "\\\"";
    } else if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (byte < 0x20 || byte == 0x7F) {
      out += hex_escape(byte);
    } else {
      out += c;  // UTF-8 sequences pass through: GBNF literals are UTF-8
    }
  }
  return out + "\"";
}

std::string gbnf_class_char(uint32_t code_point) {
  switch (code_point) {
    case ']': return "\\]";
    case '[': return "\\[";
    case '\\': return "\\\\";
    case '-': return "\\-";
    case '^': return "\\^";
    case '\n': return "\\n";
    case '\r': return "\\r";
    case '\t': return "\\t";
    default: break;
  }
  if (code_point < 0x20 || code_point == 0x7F) return hex_escape(code_point);
  std::string out;
  utf8_append(&out, code_point);
  return out;
}

std::string gbnf_repeat(const std::string& item, int min, int max) {
  if (min == 0 && max < 0) return item + "*";
  if (min == 1 && max < 0) return item + "+";
  if (min == 0 && max == 1) return item + "?";
  if (min == 1 && max == 1) return item;
  if (max < 0) return item + "{" + std::to_string(min) + ",}";
  if (min == max) return item + "{" + std::to_string(min) + "}";
  return item + "{" + std::to_string(min) + "," + std::to_string(max) + "}";
}

GbnfRules::GbnfRules(const JsonSchemaLimits& limits, JsonWhitespace whitespace)
    : limits_(limits), whitespace_(whitespace) {}

std::string GbnfRules::unique_name(std::string_view hint) {
  std::string base;
  for (char c : hint) {
    const bool word = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (word) {
      base += c;
    } else if (!base.empty() && base.back() != '-') {
      base += '-';  // any other character (from a property name) becomes one '-'
    }
  }
  while (!base.empty() && base.back() == '-') base.pop_back();
  if (base.empty()) base = "rule";
  // Long property names would make long rule names; the number below keeps them unique anyway.
  if (base.size() > 64) base.resize(64);
  std::string name = base;
  // Primitive names stay free for primitive(), which may be asked for them later.
  auto taken = [this](const std::string& candidate) {
    return candidate == "root" || index_of_name_.count(candidate) != 0 ||
           find_primitive(candidate, whitespace_) != nullptr;
  };
  for (size_t n = 1; taken(name); ++n) name = base + "-" + std::to_string(n);
  return name;
}

Status GbnfRules::check_limits(size_t added_bytes) {
  if (rules_.size() >= limits_.max_rules) return limit_error("rules", limits_.max_rules);
  bytes_ += added_bytes;
  if (bytes_ > limits_.max_grammar_bytes) return limit_error("bytes", limits_.max_grammar_bytes);
  return ok_status();
}

Result<std::string> GbnfRules::add(std::string_view hint, std::string body) {
  if (auto it = name_of_body_.find(body); it != name_of_body_.end()) return it->second;
  // The top-level schema's rule is `root` itself rather than `root ::= root-1`.
  std::string name =
      hint == "root" && index_of_name_.count("root") == 0 ? std::string("root") : unique_name(hint);
  SINTER_TRY(check_limits(name.size() + body.size() + 6));
  name_of_body_.emplace(body, name);
  index_of_name_.emplace(name, rules_.size());
  rules_.emplace_back(name, std::move(body));
  return name;
}

Status GbnfRules::set_root(const std::string& expression) {
  if (index_of_name_.count("root") != 0) return ok_status();  // the walk named a rule `root` itself
  SINTER_TRY(check_limits(expression.size() + 10));
  index_of_name_.emplace("root", rules_.size());
  rules_.emplace_back("root", expression);
  return ok_status();
}

Result<std::string> GbnfRules::reserve(std::string_view hint) {
  std::string name = unique_name(hint);
  SINTER_TRY(check_limits(name.size() + 6));
  index_of_name_.emplace(name, rules_.size());
  rules_.emplace_back(name, std::string());
  return name;
}

Status GbnfRules::define(const std::string& name, std::string body) {
  auto it = index_of_name_.find(name);
  if (it == index_of_name_.end() || !rules_[it->second].second.empty())
    return make_error(ErrorCode::kInternal, "grammar rule '", name, "' defined twice or never reserved");
  bytes_ += body.size();
  if (bytes_ > limits_.max_grammar_bytes) return limit_error("bytes", limits_.max_grammar_bytes);
  rules_[it->second].second = std::move(body);
  return ok_status();
}

Result<std::string> GbnfRules::primitive(std::string_view name) {
  const PrimitiveRule* rule = find_primitive(name, whitespace_);
  if (rule == nullptr) return make_error(ErrorCode::kInternal, "no primitive grammar rule '", name, "'");
  const std::string key(name);
  if (index_of_name_.count(key) != 0) return key;
  // Named first, so that the primitives the body uses (which may refer back) find it.
  SINTER_TRY(check_limits(name.size() + rule->body.size() + 6));
  index_of_name_.emplace(key, rules_.size());
  rules_.emplace_back(key, std::string(rule->body));
  for (std::string_view used : rule->uses) SINTER_TRY(primitive(used));
  return key;
}

Result<std::string> GbnfRules::text() const {
  auto root = index_of_name_.find("root");
  if (root == index_of_name_.end()) return make_error(ErrorCode::kInternal, "grammar without a root rule");
  std::string out;
  auto write = [&out](const std::pair<std::string, std::string>& rule) {
    out += rule.first;
    out += " ::= ";
    out += rule.second;
    out += '\n';
  };
  write(rules_[root->second]);
  for (size_t i = 0; i < rules_.size(); ++i) {
    if (i != root->second) write(rules_[i]);
  }
  return out;
}

}  // namespace sinter::json_schema
