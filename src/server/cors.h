// Cross-origin requests from browsers (CORS, Fetch standard §3.2). An origin is allowed when it
// matches a pattern, where '*' stands for any run of characters. By default the local origins are
// allowed, as Ollama allows them (localhost, 127.0.0.1, [::1] and 0.0.0.0 on any port, and the
// app://, file://, tauri:// and vscode-webview:// schemes of desktop apps); `--cors-origins`
// adds patterns (Ollama's OLLAMA_ORIGINS convention: "https://*.example.com,http://host:8080",
// or "*" for every origin). Requests from other origins are refused with 403, so a web page
// cannot drive a local server from a user's browser.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "server/http/message.h"

namespace sinter::server {

class CorsPolicy {
 public:
  // `extra`: patterns added to the local ones (comma-separated items already split).
  explicit CorsPolicy(std::vector<std::string> extra = {});

  bool allows(std::string_view origin) const;

  // Adds Access-Control-Allow-Origin and friends to an answer to an allowed origin.
  void decorate(const http::Request& request, http::Response& response) const;
  // The answer to a preflight (OPTIONS with Access-Control-Request-Method) from an allowed
  // origin, for a route that has `allowed_methods`.
  void preflight(const http::Request& request, const std::vector<std::string>& allowed_methods,
                 http::Response& response) const;

 private:
  std::vector<std::string> patterns_;
};

// "a, b, c" from its items (the form of Allow and Access-Control-Allow-* headers).
std::string join_list(const std::vector<std::string>& items);

// Splits "a, b,c" into its non-empty items.
std::vector<std::string> split_origins(std::string_view list);

// Whether `text` matches `pattern`, '*' matching any run of characters (linear time).
bool wildcard_match(std::string_view pattern, std::string_view text);

}  // namespace sinter::server
