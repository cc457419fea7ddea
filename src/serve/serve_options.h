// `gpuplan serve` as a request: where to listen, what to serve, the limits. One options table
// (read/options.h) feeds the CLI's flags and docs/cli.md; defaults are ServeRequest's own.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "read/options.h"

namespace gpuplan {

struct ServeRequest {
  std::string bind = "127.0.0.1";  // loopback unless a token is given
  int64_t port = 8080;             // 0: any free port (printed on start)
  std::string meter_db;            // the meter database behind /api/meter/... (empty: none)
  std::string meter_offers;        // offers file that prices /api/meter/report (empty: hours only)
  std::string meter_alerts;        // alerts file whose rules /api/meter/alerts applies (empty: defaults)
  std::string reports;             // folder of check reports behind /api/check/reports (empty: none)
  std::string web;                 // the built page (web/dist); empty: the folder next to the binary
  std::string token;               // bearer token; required when bind is not loopback
  double body_limit_mib = 1;       // request bodies of every route but the uploads
  double upload_limit_mib = 16;    // bodies of POST /api/cost/* and /api/fit (usage traces, offers)
  double timeout_seconds = 30;     // reading a request and writing an answer, each
  double max_request_seconds = 30; // the work one request may take (a search, a solve, a report)
  int64_t threads = 2048;          // connections served at once, a thread each (HttpServerOptions)
  double keep_alive_seconds = 5;   // an idle keep-alive connection is closed after this long
  int64_t max_requests_per_address = 256;  // requests in flight from one address; past it 503
  int64_t max_connections_per_address = 512;  // connections from one address; past it the oldest close
  std::vector<std::string> allow_hosts;  // Host names answered besides localhost, 127.0.0.1, [::1]
};

const OptionTable<ServeRequest>& ServeOptionTable();

}  // namespace gpuplan
