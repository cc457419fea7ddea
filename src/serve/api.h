// The JSON API of `gpuplan serve` (and the page it serves): each route parses its JSON body or
// query into the same request type the CLI fills (keys: the options tables' JSON keys), calls
// the same library function and answers with the same JSON writer as the CLI's --json.
//
//   GET  /health                      {"status": "ok"} (no token needed)
//   GET  /api/gpus, /api/models       gpuplan gpus --json, gpuplan models --json
//   GET  /api/frameworks              gpuplan frameworks --json (the profiles of fit --framework)
//   GET  /api/options                 every options table: key, kind, default, values, unit, help
//   POST /api/fit                     fit --json; body: fit's keys; "config": a config.json (text
//                                     or object) instead of a preset; "offers": the file's text
//   POST /api/cost/{breakeven,compare,optimize,tco}
//                                     cost <job> --json; "offers" and "usage": the files' text
//   GET  /api/meter/report, /export   meter report --json / meter export (CSV) over --meter-db
//   GET  /api/meter/timeline          meter timeline --json: the total over each hour or day
//                                     (step) of the range, each = meter report --from SLOT --to END
//   GET  /api/meter/alerts            meter alerts --json: the alerts of the range, replayed from
//                                     --meter-db with the rules of --meter-alerts
//   GET  /api/check/reports[/{name}]  the check reports in --reports: a list, or one report
//   POST /api/check/compare           check compare --json -; body {"reports": [names]} of --reports
//   GET  /api/openapi.json            the OpenAPI 3 description of all of the above
//
// A request never names a file of the server: models are presets or pasted configs, offers and
// usage come as text (named "offers" and "usage" in answers and errors), the meter database, its
// offers and alerts files and the reports folder are the server's own options.
#pragma once

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "http/http_server.h"
#include "serve/serve_options.h"

namespace gpuplan {

// The server with every route added, not started. Throws InputError for a bad option (naming
// its flag), a missing --web folder, a non-loopback bind without a token.
std::unique_ptr<HttpServer> NewServeServer(const ServeRequest& r, const std::string& data_dir);

// The OpenAPI 3.0 document served at /api/openapi.json.
nlohmann::json OpenApiDocument();

}  // namespace gpuplan
