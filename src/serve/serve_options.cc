#include "serve/serve_options.h"

namespace gpuplan {

const OptionTable<ServeRequest>& ServeOptionTable() {
  using R = ServeRequest;
  static const OptionTable<R> table = [] {
    OptionTable<R> t;
    t.push_back(Option<R>("--bind", "bind", "address to listen on (anything but loopback needs --token)", &R::bind));
    t.push_back(Option<R>("--port", "port", "TCP port (0: any free port, printed on start)", &R::port).Min(0).Max(65535));
    t.push_back(Option<R>("--meter-db", "meter_db", "meter database (SQLite) for /api/meter/report, /export, /timeline and /alerts",
                          &R::meter_db).Unset("none"));
    t.push_back(Option<R>("--meter-offers", "meter_offers", "offers file that prices /api/meter/report, /timeline and /alerts (docs/offers.md)",
                          &R::meter_offers).Unset("hours only"));
    t.push_back(Option<R>("--meter-alerts", "meter_alerts",
                          "alerts file (docs/meter-alerts.md) whose rules /api/meter/alerts applies", &R::meter_alerts)
                    .Unset("the default rules"));
    t.push_back(Option<R>("--reports", "reports", "folder of check reports (JSON) for /api/check/reports", &R::reports)
                    .Unset("none"));
    t.push_back(Option<R>("--web", "web", "the built page (web/dist)", &R::web).Unset("web/ next to the binary"));
    t.push_back(Option<R>("--allow-host", "allow_hosts",
                          "a Host name answered besides localhost, 127.0.0.1 and [::1] (exact, any port; repeat or "
                          "comma-separate); every other Host is refused, against DNS rebinding",
                          &R::allow_hosts)
                    .Unset("the loopback names only"));
    t.push_back(Option<R>("--token", "token", "bearer token every /api request must carry (also $GPUPLAN_TOKEN)",
                          &R::token).Unset("none (loopback only)"));
    t.push_back(Option<R>("--body-limit-mib", "body_limit_mib", "largest request body, uploads aside",
                          &R::body_limit_mib).Unit("MiB").Min(0, true).Max(4096));
    t.push_back(Option<R>("--upload-limit-mib", "upload_limit_mib",
                          "largest body of POST /api/fit, /api/cost/* and /api/plan (usage traces, offers and workload files)",
                          &R::upload_limit_mib).Unit("MiB").Min(0, true).Max(4096));
    t.push_back(Option<R>("--timeout", "timeout_seconds", "read and write timeout per request", &R::timeout_seconds)
                    .Unit("s").Min(0, true).Max(3600));
    t.push_back(Option<R>("--max-request-seconds", "max_request_seconds",
                          "the work one request may take (a layout search, a rental solve, a meter report); past it "
                          "the request ends with a 400 naming this option",
                          &R::max_request_seconds)
                    .Unit("s")
                    .Min(0, true)
                    .Max(3600));
    t.push_back(Option<R>("--threads", "threads",
                          "connections served at once, a thread each (an idle or slow client holds only its own; "
                          "more wait for one to close)",
                          &R::threads).Min(1).Max(100000));
    t.push_back(Option<R>("--keep-alive-seconds", "keep_alive_seconds",
                          "an idle keep-alive connection is closed after this long without a request", &R::keep_alive_seconds)
                    .Unit("s")
                    .Min(1)
                    .Max(3600));
    t.push_back(Option<R>("--max-connections-per-address", "max_connections_per_address",
                          "connections open from one client address; past it its oldest are closed (checked every "
                          "0.5 s)",
                          &R::max_connections_per_address)
                    .Min(1)
                    .Max(100000));
    t.push_back(Option<R>("--max-requests-per-address", "max_requests_per_address",
                          "requests in flight from one client address (its routes running); past it the answer is 503 "
                          "at once (/health is not counted)",
                          &R::max_requests_per_address)
                    .Min(1)
                    .Max(100000));
    return t;
  }();
  return table;
}

}  // namespace gpuplan
