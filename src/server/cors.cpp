#include "server/cors.h"

namespace sinter::server {
namespace {

std::vector<std::string> local_origins() {
  std::vector<std::string> patterns;
  for (const char* host : {"localhost", "127.0.0.1", "[::1]", "0.0.0.0"}) {
    for (const char* scheme : {"http://", "https://"}) {
      patterns.push_back(std::string(scheme) + host);
      patterns.push_back(std::string(scheme) + host + ":*");
    }
  }
  for (const char* app : {"app://*", "file://*", "tauri://*", "vscode-webview://*"}) patterns.push_back(app);
  return patterns;
}

}  // namespace

std::string join_list(const std::vector<std::string>& items) {
  std::string text;
  for (const std::string& item : items) text += (text.empty() ? "" : ", ") + item;
  return text;
}

std::vector<std::string> split_origins(std::string_view list) {
  std::vector<std::string> items;
  while (!list.empty()) {
    const size_t comma = list.find(',');
    std::string_view item = list.substr(0, comma);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (!item.empty()) items.emplace_back(item);
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return items;
}

bool wildcard_match(std::string_view pattern, std::string_view text) {
  // Greedy matching with one backtrack point: linear in pattern × text at worst, which both bound.
  size_t p = 0;
  size_t t = 0;
  size_t star = std::string_view::npos;
  size_t resume = 0;
  while (t < text.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      resume = t;
    } else if (p < pattern.size() && pattern[p] == text[t]) {
      ++p;
      ++t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

CorsPolicy::CorsPolicy(std::vector<std::string> extra) : patterns_(local_origins()) {
  for (std::string& pattern : extra) patterns_.push_back(std::move(pattern));
}

bool CorsPolicy::allows(std::string_view origin) const {
  for (const std::string& pattern : patterns_) {
    if (wildcard_match(pattern, origin)) return true;
  }
  return false;
}

void CorsPolicy::decorate(const http::Request& request, http::Response& response) const {
  const std::string* origin = request.header("Origin");
  if (origin == nullptr || !allows(*origin)) return;
  response.set_header("Access-Control-Allow-Origin", *origin);
  response.set_header("Vary", "Origin");
  response.set_header("Access-Control-Expose-Headers", "X-Request-Id, Retry-After");
}

void CorsPolicy::preflight(const http::Request& request, const std::vector<std::string>& allowed_methods,
                           http::Response& response) const {
  std::vector<std::string> methods = allowed_methods;
  methods.push_back("OPTIONS");
  response.status = 204;
  response.set_header("Allow", join_list(methods));
  decorate(request, response);
  if (!response.headers.has("Access-Control-Allow-Origin")) return;
  response.set_header("Access-Control-Allow-Methods", join_list(methods));
  // Clients send headers of their own (the openai SDK's x-stainless-*): allow what is asked.
  const std::string* asked = request.header("Access-Control-Request-Headers");
  response.set_header("Access-Control-Allow-Headers",
                      asked != nullptr && !asked->empty() ? *asked : "Authorization, Content-Type");
  response.set_header("Access-Control-Max-Age", "86400");
}

}  // namespace sinter::server
