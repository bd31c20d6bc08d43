// Routes: a method and a path pattern to a handler. A pattern's "{name}" segment matches one
// segment of the path, or, as the pattern's last segment, the rest of it ("/v1/models/{id}"
// matches "/v1/models/org/model"). HEAD is answered by a route's GET handler.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "server/http/message.h"

namespace sinter::server::http {

using RouteHandler = std::function<void(Request& request, Response& response)>;

class Router {
 public:
  void add(std::string method, std::string pattern, RouteHandler handler);

  struct Match {
    const RouteHandler* handler = nullptr;  // null: no route for this method
    std::string pattern;                    // the route's pattern ("" when the path is unknown)
    std::vector<std::string> allowed;       // the methods the path has, when it is known
    std::vector<std::string> params;        // what "{...}" segments matched
  };
  Match find(std::string_view method, std::string_view path) const;

 private:
  struct Route {
    std::string method;
    std::string pattern;
    std::vector<std::string> segments;
    RouteHandler handler;
  };
  static bool matches(const Route& route, std::string_view path, std::vector<std::string>& params);

  std::vector<Route> routes_;
};

}  // namespace sinter::server::http
