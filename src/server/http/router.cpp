#include "server/http/router.h"

#include <algorithm>

namespace sinter::server::http {
namespace {

std::vector<std::string> split_path(std::string_view path) {
  std::vector<std::string> segments;
  while (!path.empty()) {
    if (path.front() == '/') path.remove_prefix(1);
    const size_t slash = path.find('/');
    segments.emplace_back(path.substr(0, slash));
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash);
  }
  return segments;
}

bool is_parameter(const std::string& segment) {
  return segment.size() >= 2 && segment.front() == '{' && segment.back() == '}';
}

}  // namespace

void Router::add(std::string method, std::string pattern, RouteHandler handler) {
  std::vector<std::string> segments = split_path(pattern);
  routes_.push_back({std::move(method), std::move(pattern), std::move(segments), std::move(handler)});
}

bool Router::matches(const Route& route, std::string_view path, std::vector<std::string>& params) {
  if (path.empty() || path.front() != '/') return false;
  params.clear();
  std::string_view rest = path.substr(1);
  for (size_t i = 0; i < route.segments.size(); ++i) {
    const std::string& segment = route.segments[i];
    const bool last = i + 1 == route.segments.size();
    const size_t slash = rest.find('/');
    const std::string_view piece = rest.substr(0, slash);
    if (is_parameter(segment)) {
      const std::string_view value = last ? rest : piece;
      if (value.empty()) return false;
      params.emplace_back(value);
      if (last) return true;
    } else if (piece != segment) {
      return false;
    }
    if (last) return slash == std::string_view::npos;
    if (slash == std::string_view::npos) return false;
    rest.remove_prefix(slash + 1);
  }
  return rest.empty();
}

Router::Match Router::find(std::string_view method, std::string_view path) const {
  Match match;
  std::vector<std::string> params;
  for (const Route& route : routes_) {
    if (!matches(route, path, params)) continue;
    if (match.pattern.empty()) match.pattern = route.pattern;
    match.allowed.push_back(route.method);
    if (route.method == "GET") match.allowed.push_back("HEAD");
    if (match.handler == nullptr && (route.method == method || (method == "HEAD" && route.method == "GET"))) {
      match.handler = &route.handler;
      match.pattern = route.pattern;
      match.params = params;
    }
  }
  std::sort(match.allowed.begin(), match.allowed.end());
  match.allowed.erase(std::unique(match.allowed.begin(), match.allowed.end()), match.allowed.end());
  return match;
}

}  // namespace sinter::server::http
