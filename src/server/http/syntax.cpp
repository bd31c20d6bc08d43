#include "server/http/syntax.h"

#include <algorithm>
#include <cstring>

namespace sinter::server::http {
namespace {

bool is_alnum(unsigned char c) { return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z'); }

bool is_token_char(unsigned char c) { return is_alnum(c) || (c != 0 && std::strchr("!#$%&'*+-.^_`|~", c)); }

// unreserved and sub-delims (RFC 3986 §2.3, §2.2): a reg-name's characters besides pct-encoded.
bool is_host_char(unsigned char c) { return is_alnum(c) || (c != 0 && std::strchr("-._~!$&'()*+,;=", c)); }

// quoted-string = DQUOTE *( qdtext / quoted-pair ) DQUOTE, from text[at] == '"'; moves `at` past
// it. qdtext: HTAB, SP, visible characters but '"' and '\\', obs-text; quoted-pair: '\\' and
// HTAB, SP, a visible character or obs-text.
bool take_quoted_string(std::string_view text, size_t& at) {
  for (++at; at < text.size(); ++at) {
    const auto byte = static_cast<unsigned char>(text[at]);
    if (byte == '"') {
      ++at;
      return true;
    }
    if (byte == '\\') {
      if (++at == text.size()) return false;
      const auto escaped = static_cast<unsigned char>(text[at]);
      if (escaped != '\t' && (escaped < 0x20 || escaped == 0x7f)) return false;
    } else if (byte != '\t' && (byte < 0x20 || byte == 0x7f)) {
      return false;
    }
  }
  return false;
}

}  // namespace

bool is_token(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(),
                                      [](char c) { return is_token_char(static_cast<unsigned char>(c)); });
}

bool is_field_value(std::string_view value) {
  return std::all_of(value.begin(), value.end(), [](char c) {
    const auto byte = static_cast<unsigned char>(c);
    return byte == '\t' || (byte >= 0x20 && byte != 0x7f);
  });
}

bool is_target_text(std::string_view target) {
  return !target.empty() && std::all_of(target.begin(), target.end(), [](char c) {
    const auto byte = static_cast<unsigned char>(c);
    return byte > 0x20 && byte != 0x7f;
  });
}

bool is_valid_host(std::string_view host) {
  std::string_view port;
  if (!host.empty() && host.front() == '[') {
    // IP-literal: IPv6address or IPvFuture, both made of unreserved, sub-delims and ':'.
    const size_t close = host.find(']');
    if (close == std::string_view::npos) return false;
    for (char c : host.substr(1, close - 1)) {
      if (c != ':' && !is_host_char(static_cast<unsigned char>(c))) return false;
    }
    const std::string_view rest = host.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return false;
      port = rest.substr(1);
    }
  } else {
    const size_t colon = host.find(':');
    if (colon != std::string_view::npos) port = host.substr(colon + 1);
    const std::string_view name = host.substr(0, colon);
    for (size_t i = 0; i < name.size(); ++i) {
      if (name[i] == '%') {  // pct-encoded: '%' HEXDIG HEXDIG
        if (i + 2 >= name.size() || hex_value(name[i + 1]) < 0 || hex_value(name[i + 2]) < 0) return false;
        i += 2;
      } else if (!is_host_char(static_cast<unsigned char>(name[i]))) {
        return false;
      }
    }
  }
  return std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool is_chunk_extension(std::string_view extension) {
  size_t at = 0;
  const auto skip_whitespace = [&] {
    while (at < extension.size() && (extension[at] == ' ' || extension[at] == '\t')) ++at;
  };
  const auto take_token = [&] {
    const size_t begin = at;
    while (at < extension.size() && is_token_char(static_cast<unsigned char>(extension[at]))) ++at;
    return at > begin;
  };
  while (at < extension.size()) {
    skip_whitespace();
    if (at == extension.size() || extension[at] != ';') return false;
    ++at;
    skip_whitespace();
    if (!take_token()) return false;
    const size_t after_name = at;
    skip_whitespace();
    if (at == extension.size() || extension[at] != '=') {
      at = after_name;  // the whitespace goes before the next ';', or is refused at the end
      continue;
    }
    ++at;
    skip_whitespace();
    if (at < extension.size() && extension[at] == '"') {
      if (!take_quoted_string(extension, at)) return false;
    } else if (!take_token()) {
      return false;
    }
  }
  return true;
}

std::string_view trim_whitespace(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace sinter::server::http
