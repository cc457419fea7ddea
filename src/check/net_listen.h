// The other end of the link test: `gpuplan check --net-listen [ADDR:]PORT` (docs/check.md §12).
// A small cpp-httplib server with three routes and nothing else:
//   GET  /net/ping                        {"service": "gpuplan-net", "rate_mbps": R or null}
//   POST /net/sink                        reads and discards the body, answers what it read and when
//   GET  /net/source?bytes=N&seconds=S    streams N pseudo-random bytes, or for S seconds
// It relays nothing, reads no file, and bounds what a request may cost (bytes, seconds,
// connections). It does not sit on src/http's HttpServer: that wrapper answers whole JSON bodies
// of at most a few MiB, and the link test moves streamed bodies of GiBs at a paced rate.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "check/net.h"

namespace gpuplan {

inline constexpr uint64_t kNetMaxRequestBytes = uint64_t{1} << 44;        // 16 TiB a request
inline constexpr double kNetMaxRequestSeconds = kNetMaxSeconds * kNetTransferLimitFactor + 60;
inline constexpr double kNetPaceBurstBytes = 64 * 1024;                   // the bucket's size

struct NetListenOptions {
  NetEndpoint at{"127.0.0.1", kNetDefaultPort};
  std::optional<double> rate_mbps;  // pace reads and writes to this, each way (a known link, for tests)
  std::string token;                // Bearer token every request must carry; required off loopback
  int max_streams = kNetMaxStreams + 2;  // connections served at once (the streams, a ping)
  double io_timeout_seconds = 5;    // a read or write stalled this long ends its connection
};

// The options of a CheckRequest's --net-listen, --net-rate-mbps and --net-token. Throws
// InputError (net_listen, net_token) for a bad address or a non-loopback one without a token.
NetListenOptions NetListenOptionsOf(const std::string& listen, const std::optional<double>& rate_mbps,
                                    const std::string& token);

class NetListener {
 public:
  explicit NetListener(NetListenOptions options);
  ~NetListener();
  NetListener(const NetListener&) = delete;
  NetListener& operator=(const NetListener&) = delete;

  // Binds (EnvironmentError when it cannot); returns the port. Run() must follow: cpp-httplib
  // closes the bound socket only when a server that ran stops.
  int Start();
  // Serves until Stop() (another thread).
  void Run();
  // Ends every stream in flight within one chunk and stops serving.
  void Stop();
  int Port() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpuplan
