// The JSON API of `gpuplan serve` (and the page it serves): each route parses its JSON body or
// query into the same request type the CLI fills (keys: the options tables' JSON keys), calls
// the same library function and answers with the same JSON writer as the CLI's --json.
//
// The routes are one table, ApiRoutes (serve/routes.h, written in api.cc): the server adds each
// of them, the OpenAPI document (GET /api/openapi.json) describes each, and GET /api/options
// lists the options table each takes. Read the table, or the document, for the list.
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
// its key: InputError::Option, which `gpuplan serve` spells as the flag), a missing --web
// folder, a non-loopback bind without a token.
std::unique_ptr<HttpServer> NewServeServer(const ServeRequest& r, const std::string& data_dir);

// The OpenAPI 3.0 document served at /api/openapi.json.
nlohmann::json OpenApiDocument();

}  // namespace gpuplan
