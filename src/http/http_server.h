// A small HTTP server for gpuplan's front ends (the serve API and page; `meter run`'s Prometheus
// /metrics, meter/meter_service.h): cpp-httplib behind one wrapper that owns every safety rule, so a route
// is a function from a request to a response and cannot forget one.
//
// What the wrapper does for every route:
//  - binds `bind:port` (port 0: a free port, reported by Port()); refuses to start on an
//    address other than loopback without a token;
//  - limits request bodies (per route; 413 past it) and read/write time;
//  - with a token, requires `Authorization: Bearer <token>` on every route not marked public
//    (401); without one (loopback only), requires a loopback Host header (no DNS rebinding);
//  - POST bodies must be `application/json` (a cross-site form cannot send that without a
//    CORS preflight, and no route answers CORS);
//  - security headers on every answer (CSP, nosniff, no framing, no referrer);
//  - exceptions become JSON errors in one place (ErrorToJson, format/error_json.h, with the HTTP
//    status added as "code"; an InputError's option keys spelled as the JSON keys they are,
//    SpellOptions): InputError -> 400, NegativeAnswer -> 422, EnvironmentError -> 503,
//    anything else -> 500 with a fixed message (no what(), no stack, no path);
//  - static files from one folder, with no way out of it (no "..", no links out, no dot files).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "read/messages.h"

namespace gpuplan {

// The cookie a browser holds the token in (POST /api/session sets it): HttpOnly, so no script
// reads it, SameSite=Strict, so no other site's page sends it.
inline constexpr const char* kTokenCookie = "gpuplan_token";

struct HttpServerOptions {
  std::string bind = "127.0.0.1";
  int port = 8080;                          // 0: any free port (Port() after Start())
  std::size_t body_limit = 1024 * 1024;     // bytes, for routes that set none of their own
  double read_timeout_seconds = 30;
  double write_timeout_seconds = 30;
  // Each route's work budget (core/work_budget.h): past it the computation ends with a 400 naming
  // max_request_seconds; Stop() ends every computation in flight (503).
  double max_request_seconds = 30;
  // Connections served at once, each on a thread of its own (ConnectionThreads in
  // http_server.cc); more wait for one to close. Idle and slow clients hold only their own thread,
  // so /health is answered beside them (issue 26 req. 8: 1,000 idle and 300 slow connections).
  int threads = 2048;
  // An idle keep-alive connection is closed after this long without a request.
  double keep_alive_seconds = 5;
  // Connections open from one client address: past it, its oldest are closed (within 0.5 s).
  int max_connections_per_address = 512;
  // Requests in flight from one client address (its routes running): past it, 503 at once.
  int max_requests_per_address = 256;
  std::string token;                        // required (Bearer) when not empty
  // How the front end takes the token, for the error when a non-loopback bind has none.
  std::string token_flag = "--token";
  std::string token_how = "give --token or set GPUPLAN_TOKEN";
  std::string static_root;                  // served for GET paths no route takes; empty: none
  // Host header names answered besides the loopback ones (`--allow-host`), compared exactly
  // (case-insensitive), with or without a port.
  std::vector<std::string> allowed_hosts;
  // The catalogue the answers' prose is translated by (issue 26 req. 4): a request with ?lang=zh
  // or Accept-Language: zh gets its messages, notes, summaries, evidence and advice in Chinese
  // (HttpResponse::Json, kProseKeys); none: English always.
  std::shared_ptr<const Messages> messages;
  std::string content_security_policy =
      "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
      "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";
};

struct HttpRequest {
  std::string method;
  std::string path;
  std::map<std::string, std::string> query;   // ?a=1&b=2 (the last value of a repeated key)
  std::map<std::string, std::string> params;  // path captures by name: /api/check/reports/{name} -> "name"
  std::string body;
};

// The JSON keys whose string values (or lists of strings) are prose a person reads, translated by
// the catalogue for a Chinese request; identifiers and enum values (status, kind, by) never are.
bool IsProseKey(const std::string& key);

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::map<std::string, std::string> headers;  // more headers (Set-Cookie of POST /api/session)
  static HttpResponse Json(const nlohmann::json& j, int status = 200);
};

using HttpHandler = std::function<HttpResponse(const HttpRequest&)>;

struct RouteOptions {
  std::size_t body_limit = 0;  // bytes; 0: HttpServerOptions::body_limit
  bool is_public = false;      // answered without the token (GET /health)
};

// True for exactly "localhost", "::1" ("[::1]") or a dotted IPv4 address in 127.0.0.0/8
// (four decimal octets): "127.0.0.1.evil.example" is not (issue 26: DNS rebinding).
bool IsLoopbackAddress(const std::string& address);
// Whether a Host header names this server: a loopback name (IsLoopbackAddress) or one of
// `allowed`, exactly (case-insensitive), optionally followed by ":PORT" (digits only).
bool HostIsAllowed(const std::string& host_header, const std::vector<std::string>& allowed);

// The JSON error object of an exception and its HTTP status (the one mapping, see above).
HttpResponse ErrorResponse(const std::exception_ptr& e);
// An error answer made here (404, 401, 413, ...): {"error": {"code", "kind", "message", ...}}.
HttpResponse ErrorResponse(int status, const std::string& kind, const std::string& message,
                           const std::string& field = {});

class HttpServer {
 public:
  // Throws InputError for a non-loopback bind without a token (field: `token_flag`, "--token"),
  // a port outside 0-65535 ("--port") or a static root that is not a folder ("--web").
  explicit HttpServer(HttpServerOptions options);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // `pattern` is a literal path or has one {name} segment at its end ("/api/check/reports/{name}");
  // a path no route (nor static file) takes is a plain 404, a route's path with another method 405.
  void Get(const std::string& pattern, HttpHandler handler, RouteOptions options = {});
  void Post(const std::string& pattern, HttpHandler handler, RouteOptions options = {});

  // Binds (EnvironmentError when the address cannot be bound); returns the port.
  int Start();
  // Serves until Stop() (from another thread or a signal handler's thread).
  void Run();
  void Stop();
  int Port() const;
  const HttpServerOptions& Options() const;
  // The routes added, in order: each one's method ("GET", "POST") and pattern ("/api/check/reports/{name}").
  std::vector<std::pair<std::string, std::string>> Routes() const;

  // Answers one request in this process as a connection's request is answered (the gate of
  // Host, token, media type and body size, the route, the error mapping), with no socket: for
  // tests and the fuzz target of the serve API (tests/fuzz/fuzz_serve_api.cc). `request.params`
  // is ignored (the route captures them); `headers` are the request's (Host, Authorization,
  // Content-Type, ...).
  HttpResponse Answer(const HttpRequest& request, const std::map<std::string, std::string>& headers) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpuplan
