// The serve API's routes, one table (ApiRoutes, api.cc): NewServeServer registers each route of
// it, OpenApiDocument (openapi.cc) describes each, and GET /api/options lists the options table
// each takes. A route is written down once, here; nothing lists them by hand a second time.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "http/http_server.h"

namespace gpuplan {

struct ApiState;  // what every handler shares (api.cc)
using ApiHandler = HttpResponse (*)(ApiState&, const HttpRequest&);

// The keys a meter query may not set: the server's own files (--meter-db, --meter-offers,
// --meter-alerts). MeterQuery refuses them; the document leaves them out of the parameters.
inline const std::vector<std::string> kServerFileKeys = {"db", "offers", "alerts"};

struct ApiRoute {
  std::string method;  // "GET" or "POST"
  std::string path;    // literal, or ending in one {name} segment ("/api/check/reports/{name}")
  ApiHandler handler = nullptr;
  bool upload = false;     // the body may be up to --upload-limit-mib (pasted files), not --body-limit-mib
  bool is_public = false;  // answered without the token (GET /health)
  std::string summary;
  std::string description;  // more prose for the document; may be empty
  // The options table the route takes, by its name in GET /api/options ("fit", "meter_report"),
  // and that table as /api/options lists it (key, flag, kind, default, ...). A POST takes it as
  // the body's keys, a GET as query parameters (less kServerFileKeys). Empty / null: none.
  std::string options;
  nlohmann::json (*option_list)() = nullptr;
  nlohmann::json body_example;                  // POST: an example body (a good request)
  std::map<std::string, std::string> examples;  // GET: an example value per query or path parameter
  std::string answer;                           // the 200 answer, in words
  std::string schema;                           // its schema, by name in the document's components; empty: CSV
  std::map<std::string, std::string> more_answers;  // other statuses the route gives ("404": "no such report")
};

// Every route of the API, in the order the server adds them.
const std::vector<ApiRoute>& ApiRoutes();

}  // namespace gpuplan
