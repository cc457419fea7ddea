#include "http/http_server.h"

#include <httplib.h>
#include <sys/resource.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

#include "core/error.h"
#include "core/work_budget.h"
#include "format/error_json.h"
#include "read/file_text.h"

namespace gpuplan {

namespace fs = std::filesystem;

namespace {

constexpr int kStatusBadRequest = 400;
constexpr int kStatusUnauthorized = 401;
constexpr int kStatusForbidden = 403;
constexpr int kStatusNotFound = 404;
constexpr int kStatusMethodNotAllowed = 405;
constexpr int kStatusPayloadTooLarge = 413;
constexpr int kStatusUnsupportedMediaType = 415;
constexpr int kStatusUnprocessable = 422;
constexpr int kStatusInternal = 500;
constexpr int kStatusUnavailable = 503;
// The listen backlog (see HttpServer::Start): room for a burst of several hundred connections.
constexpr int kListenBacklog = 1024;

struct Route {
  std::string method;
  std::string pattern;  // as added
  std::string prefix;  // the literal part
  std::string param;   // the {name} at the end; empty: the path must equal `prefix`
  HttpHandler handler;
  RouteOptions options;
};

// Splits "/api/cost/{job}" into "/api/cost/" and "job".
Route MakeRoute(std::string method, const std::string& pattern, HttpHandler h, RouteOptions o) {
  Route r{std::move(method), pattern, pattern, "", std::move(h), o};
  const auto open = pattern.find('{');
  if (open != std::string::npos) {
    const auto close = pattern.find('}', open);
    if (close != pattern.size() - 1) {
      throw std::logic_error("a route's {name} must end it: " + pattern);
    }
    r.prefix = pattern.substr(0, open);
    r.param = pattern.substr(open + 1, close - open - 1);
  }
  return r;
}

bool Matches(const Route& r, const std::string& path, std::string* capture) {
  if (r.param.empty()) {
    return path == r.prefix;
  }
  if (path.size() <= r.prefix.size() || path.compare(0, r.prefix.size(), r.prefix) != 0) {
    return false;
  }
  const std::string rest = path.substr(r.prefix.size());
  if (rest.find('/') != std::string::npos) {
    return false;
  }
  *capture = rest;
  return true;
}

// Equal strings in a time that does not depend on where they differ.
bool SameSecret(const std::string& a, const std::string& b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  const std::size_t n = std::max(a.size(), b.size());
  for (std::size_t i = 0; i < n; ++i) {
    const auto x = static_cast<unsigned char>(i < a.size() ? a[i] : 0);
    const auto y = static_cast<unsigned char>(i < b.size() ? b[i] : 0);
    diff = static_cast<unsigned char>(diff | (x ^ y));
  }
  return diff == 0;
}

// The value of cookie `name` in a Cookie header ("a=1; gpuplan_token=xyz"), if there.
std::optional<std::string> CookieValue(const std::string& header, const std::string& name) {
  std::size_t at = 0;
  while (at < header.size()) {
    std::size_t end = header.find(';', at);
    if (end == std::string::npos) {
      end = header.size();
    }
    std::string part = header.substr(at, end - at);
    const auto first = part.find_first_not_of(' ');
    part = first == std::string::npos ? "" : part.substr(first);
    const auto eq = part.find('=');
    if (eq != std::string::npos && part.substr(0, eq) == name) {
      return part.substr(eq + 1);
    }
    at = end + 1;
  }
  return std::nullopt;
}

std::string ContentTypeOf(const fs::path& p) {
  static const std::map<std::string, std::string> types = {
      {".html", "text/html; charset=utf-8"}, {".js", "text/javascript; charset=utf-8"},
      {".mjs", "text/javascript; charset=utf-8"}, {".css", "text/css; charset=utf-8"},
      {".json", "application/json"}, {".svg", "image/svg+xml"}, {".png", "image/png"},
      {".ico", "image/x-icon"}, {".woff2", "font/woff2"}, {".txt", "text/plain; charset=utf-8"},
      {".map", "application/json"}};
  const auto it = types.find(p.extension().string());
  return it == types.end() ? "application/octet-stream" : it->second;
}

void SetSecurityHeaders(httplib::Response& res, const HttpServerOptions& o) {
  res.set_header("Content-Security-Policy", o.content_security_policy);
  res.set_header("X-Content-Type-Options", "nosniff");
  res.set_header("X-Frame-Options", "DENY");
  res.set_header("Referrer-Policy", "no-referrer");
  res.set_header("Cross-Origin-Opener-Policy", "same-origin");
  res.set_header("Cross-Origin-Resource-Policy", "same-origin");
}

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

}  // namespace

bool IsLoopbackAddress(const std::string& address) {
  const std::string a = Lower(address);
  if (a == "localhost" || a == "::1" || a == "[::1]") {
    return true;
  }
  // 127.x.y.z: four octets of 1-3 digits, each at most 255, the first 127.
  int octets = 0;
  std::size_t i = 0;
  while (i <= a.size()) {
    std::size_t j = i;
    while (j < a.size() && j - i < 4 && std::isdigit(static_cast<unsigned char>(a[j])) != 0) {
      ++j;
    }
    if (j == i || j - i > 3 || std::stoi(a.substr(i, j - i)) > 255 || (octets == 0 && a.substr(i, j - i) != "127")) {
      return false;
    }
    ++octets;
    if (j == a.size()) {
      break;
    }
    if (a[j] != '.' || octets == 4) {
      return false;
    }
    i = j + 1;
  }
  return octets == 4;
}

bool HostIsAllowed(const std::string& host_header, const std::vector<std::string>& allowed) {
  std::string host = host_header;
  std::string port;
  if (!host.empty() && host[0] == '[') {
    const auto close = host.find(']');
    if (close == std::string::npos) {
      return false;
    }
    port = host.substr(close + 1);
    host = host.substr(1, close - 1);
    if (!port.empty() && port[0] != ':') {
      return false;
    }
  } else if (const auto colon = host.find(':'); colon != std::string::npos) {
    port = host.substr(colon);
    host = host.substr(0, colon);
  }
  if (!port.empty() &&
      (port.size() < 2 || port.size() > 6 ||
       !std::all_of(port.begin() + 1, port.end(), [](unsigned char c) { return std::isdigit(c) != 0; }))) {
    return false;
  }
  if (IsLoopbackAddress(host)) {
    return true;
  }
  const std::string h = Lower(host);
  return !h.empty() && std::any_of(allowed.begin(), allowed.end(), [&](const std::string& a) { return Lower(a) == h; });
}

bool IsProseKey(const std::string& key) {
  static const std::set<std::string> prose = {"message", "notes", "note", "summary", "line", "lines", "evidence",
                                              "advice", "reason", "why", "solver_status", "recommendation",
                                              "verdict_text", "result", "change", "description", "warnings",
                                              // a check result's texts and unit words (errors, GPUs, lanes)
                                              "measured_text", "expected_text", "expectation_source", "unit",
                                              // the price's basis of a fit answer
                                              "basis",
                                              // where a fit's checkpoint failure rate comes from
                                              "failure_basis",
                                              // a plan's alternatives, re-plan reasons and why it has none
                                              "gives_up", "reasons", "unserved"};
  return prose.count(key) > 0;
}

namespace {

// The language and catalogue of the request the calling thread answers (set in Dispatch).
thread_local Lang t_lang = Lang::kEn;
thread_local const Messages* t_messages = nullptr;

// Every prose value of `j` translated, walked with an explicit stack (the JSON is ours, but no
// walker here recurses on depth).
nlohmann::json TranslateProse(nlohmann::json j, const Messages& m) {
  std::vector<nlohmann::json*> stack{&j};
  while (!stack.empty()) {
    nlohmann::json* node = stack.back();
    stack.pop_back();
    if (node->is_object()) {
      for (auto it = node->begin(); it != node->end(); ++it) {
        if (IsProseKey(it.key())) {
          if (it->is_string()) {
            *it = m.Translate(it->get<std::string>(), Lang::kZh);
            continue;
          }
          if (it->is_array()) {
            for (auto& x : *it) {
              if (x.is_string()) {
                x = m.Translate(x.get<std::string>(), Lang::kZh);
              }
            }
            continue;
          }
        }
        if (it->is_structured()) {
          stack.push_back(&*it);
        }
      }
    } else if (node->is_array()) {
      for (auto& x : *node) {
        if (x.is_structured()) {
          stack.push_back(&x);
        }
      }
    }
  }
  return j;
}

// ?lang=zh|en first, else the first language of Accept-Language ("zh-CN,zh;q=0.9,en;q=0.8").
Lang RequestLang(const httplib::Request& req) {
  const std::string q = req.get_param_value("lang");
  if (!q.empty()) {
    return q.rfind("zh", 0) == 0 ? Lang::kZh : Lang::kEn;
  }
  const std::string accept = req.get_header_value("Accept-Language");
  const auto first = accept.find_first_not_of(' ');
  return first != std::string::npos && accept.compare(first, 2, "zh") == 0 ? Lang::kZh : Lang::kEn;
}

}  // namespace

HttpResponse HttpResponse::Json(const nlohmann::json& j_in, int status) {
  HttpResponse r;
  r.status = status;
  const nlohmann::json& j = j_in;
  if (t_lang == Lang::kZh && t_messages != nullptr) {
    const nlohmann::json zh = TranslateProse(j_in, *t_messages);
    r.body = zh.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    return r;
  }
  // Strings that are not UTF-8 (an error message quoting the bytes of a request, a name read from
  // a pasted file) are written with U+FFFD in place of each bad byte: the writer's default, an
  // exception, thrown while answering a 400, escaped Dispatch and became a 500 "internal error".
  r.body = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return r;
}

HttpResponse ErrorResponse(int status, const std::string& kind, const std::string& message, const std::string& field) {
  nlohmann::json j = {{"error",
                       {{"code", status},
                        {"kind", kind},
                        {"message", message},
                        {"file", nullptr},
                        {"line", nullptr},
                        {"field", field.empty() ? nlohmann::json(nullptr) : nlohmann::json(field)},
                        {"suggestions", nlohmann::json::array()}}}};
  return HttpResponse::Json(j, status);
}

HttpResponse ErrorResponse(const std::exception_ptr& e) {
  ErrorReport r;
  try {
    std::rethrow_exception(e);
  } catch (const InputError& x) {
    // The library names options by key: the JSON API spells them as the JSON keys they are.
    r = DescribeError(SpellOptions(x, [](const std::string& key) { return key; }));
  } catch (const std::exception& x) {
    r = DescribeError(x);
  } catch (...) {
    r.kind = ErrorKind::kInternal;
  }
  int status = kStatusInternal;
  switch (r.kind) {
    case ErrorKind::kInput:
    case ErrorKind::kUsage:
      status = kStatusBadRequest;
      break;
    case ErrorKind::kNegative:
      status = kStatusUnprocessable;
      break;
    case ErrorKind::kEnvironment:
      status = kStatusUnavailable;
      break;
    case ErrorKind::kInternal:
      break;
  }
  if (status >= kStatusInternal) {
    // Nothing of the exception goes out: its text may hold a path or an internal detail. It goes
    // to the server's log (standard error) instead.
    std::cerr << "gpuplan serve: " << r.Line() << "\n";
    const char* what = status == kStatusUnavailable ? "the server cannot do this now (an environment problem; see its log)"
                                                    : "internal error (a bug in gpuplan; see the server's log)";
    return ErrorResponse(status, std::string(ToString(r.kind)), what);
  }
  // A file is named by its last component only: the client gave the text, not the path.
  if (!r.file.empty()) {
    r.file = fs::path(r.file).filename().string();
  }
  nlohmann::json j = ErrorToJson(r);
  j["error"]["code"] = status;
  return HttpResponse::Json(j, status);
}

// httplib's task queue with a thread per connection, up to `most` at once (then the next waits
// for one to close): httplib serves a connection on one thread for its whole life, so with its
// fixed pool 260 idle keep-alive connections or 300 slow ones took every thread and /health
// waited behind them (issue 26 req. 8). A thread that waits on a socket costs little memory
// (its stack is reserved, not touched). shutdown() waits for the connections in flight, which
// httplib ends once the server stops (an idle keep-alive one at its next poll).
class ConnectionThreads : public httplib::TaskQueue {
 public:
  explicit ConnectionThreads(std::size_t most) : most_(most) {}
  ~ConnectionThreads() override { shutdown(); }

  void enqueue(std::function<void()> fn) override {
    std::unique_lock<std::mutex> lock(mu_);
    if (running_ >= most_) {
      waiting_.push_back(std::move(fn));
      return;
    }
    ++running_;
    lock.unlock();
    Start(std::move(fn));
  }

  void shutdown() override {
    std::unique_lock<std::mutex> lock(mu_);
    done_.wait(lock, [this] { return running_ == 0; });
  }

 private:
  void Start(std::function<void()> fn) {
    std::thread([this, fn = std::move(fn)]() mutable {
      for (;;) {
        fn();
        std::lock_guard<std::mutex> lock(mu_);
        if (waiting_.empty()) {
          --running_;
          done_.notify_all();
          return;
        }
        fn = std::move(waiting_.front());  // this thread takes the next waiting connection
        waiting_.pop_front();
      }
    }).detach();
  }

  const std::size_t most_;
  std::mutex mu_;
  std::condition_variable done_;
  std::size_t running_ = 0;
  std::deque<std::function<void()>> waiting_;
};

int PortOf(const sockaddr_storage& a) {
  if (a.ss_family == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in&>(a).sin_port);
  if (a.ss_family == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6&>(a).sin6_port);
  return -1;
}

std::string AddressOf(const sockaddr_storage& a) {
  char text[INET6_ADDRSTRLEN] = {};
  if (a.ss_family == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in&>(a).sin_addr, text, sizeof text);
  } else if (a.ss_family == AF_INET6) {
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6&>(a).sin6_addr, text, sizeof text);
  }
  return text;
}

// This process's open descriptors (/proc/self/fd).
std::vector<int> OpenDescriptors() {
  std::vector<int> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/proc/self/fd", ec)) {
    const std::string name = e.path().filename().string();
    if (!name.empty() && std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      out.push_back(std::stoi(name));
    }
  }
  return out;
}

// A connected socket accepted on `local_port`: its peer's address and port; nullopt for anything
// else (a file, the listening socket, another port).
std::optional<std::pair<std::string, int>> ConnectionOf(int fd, int local_port) {
  sockaddr_storage local{}, peer{};
  socklen_t ll = sizeof local, pl = sizeof peer;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&local), &ll) != 0 || PortOf(local) != local_port ||
      getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &pl) != 0) {
    return std::nullopt;
  }
  return std::make_pair(AddressOf(peer), PortOf(peer));
}

// Whether the client of a request served on this process's listening port `local_port` from
// `address`:`port` has closed its connection. httplib 0.11 tells a handler nothing of it, so the
// socket is found once by its two ends among this process's descriptors (/proc/self/fd) and then
// peeked without waiting: 0 bytes is the peer's close. Not found (an in-process answer, or the
// connection already gone and its descriptor reused): gone only if it was found before.
class ClientWatch {
 public:
  ClientWatch(int local_port, std::string address, int port)
      : local_port_(local_port), address_(std::move(address)), port_(port) {}

  bool Gone() {
    if (fd_ < 0 && !Find()) {
      return false;
    }
    if (!Same(fd_)) {
      return true;  // the descriptor now belongs to another socket: ours was closed
    }
    char c = 0;
    const ssize_t n = recv(fd_, &c, 1, MSG_PEEK | MSG_DONTWAIT);
    return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
  }

 private:
  bool Same(int fd) const {
    const auto ends = ConnectionOf(fd, local_port_);
    return ends && ends->second == port_ && ends->first == address_;
  }
  bool Find() {
    for (const int fd : OpenDescriptors()) {
      if (Same(fd)) {
        fd_ = fd;
        return true;
      }
    }
    return false;
  }
  int local_port_;
  std::string address_;
  int port_;
  int fd_ = -1;
};

// Connections per client address (HttpServerOptions::max_connections_per_address): httplib 0.11
// accepts every connection and never says from where before a request arrives, so a thread looks
// every half second at this process's sockets on the listening port, by peer address, and shuts
// down the oldest of an address past its cap (its thread then sees the connection closed). An
// address that opens 1,300 connections keeps its newest; other addresses are untouched.
class ConnectionGuard {
 public:
  ConnectionGuard(int local_port, int most) : local_port_(local_port), most_(most) {
    thread_ = std::thread([this] { Loop(); });
  }
  ~ConnectionGuard() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  ConnectionGuard(const ConnectionGuard&) = delete;
  ConnectionGuard& operator=(const ConnectionGuard&) = delete;

 private:
  struct Seen {
    std::string address;
    int port;
    uint64_t first;  // the scan it was first seen in
  };
  void Loop() {
    std::unique_lock<std::mutex> lock(mu_);
    while (!cv_.wait_for(lock, std::chrono::milliseconds(500), [this] { return stop_; })) {
      Scan();
    }
  }
  void Scan() {
    ++scan_;
    std::map<int, Seen> now;
    std::map<std::string, std::vector<int>> by_address;
    for (const int fd : OpenDescriptors()) {
      const auto ends = ConnectionOf(fd, local_port_);
      if (!ends) continue;
      const auto was = seen_.find(fd);
      const bool same = was != seen_.end() && was->second.address == ends->first && was->second.port == ends->second;
      now[fd] = {ends->first, ends->second, same ? was->second.first : scan_};
      by_address[ends->first].push_back(fd);
    }
    seen_ = std::move(now);
    for (auto& [address, fds] : by_address) {
      if (static_cast<int>(fds.size()) <= most_) continue;
      std::stable_sort(fds.begin(), fds.end(), [this](int a, int b) { return seen_[a].first < seen_[b].first; });
      for (std::size_t i = 0; i + static_cast<std::size_t>(most_) < fds.size(); ++i) {
        const auto ends = ConnectionOf(fds[i], local_port_);  // still the same connection
        if (ends && ends->first == address && ends->second == seen_[fds[i]].port) {
          ::shutdown(fds[i], SHUT_RDWR);
        }
      }
    }
  }
  const int local_port_;
  const int most_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  uint64_t scan_ = 0;
  std::map<int, Seen> seen_;
  std::thread thread_;
};

// Requests in flight per client address (HttpServerOptions::max_requests_per_address).
class AddressGate {
 public:
  bool Enter(const std::string& address, int most) {
    std::lock_guard<std::mutex> lock(mu_);
    int& n = in_flight_[address];
    if (n >= most) {
      return false;
    }
    ++n;
    return true;
  }
  void Leave(const std::string& address) {
    std::lock_guard<std::mutex> lock(mu_);
    if (--in_flight_[address] <= 0) {
      in_flight_.erase(address);
    }
  }

 private:
  std::mutex mu_;
  std::map<std::string, int> in_flight_;
};

struct HttpServer::Impl {
  HttpServerOptions options;
  httplib::Server server;
  std::vector<Route> routes;
  fs::path static_root;  // canonical; empty: none
  int port = 0;
  socket_t listen_fd = INVALID_SOCKET;  // the listening socket, from the socket-options hook
  std::atomic<bool> stopping{false};     // Stop() called: computations in flight end
  mutable AddressGate gate;              // requests in flight per client address

  void Send(httplib::Response& res, const HttpResponse& r) const {
    res.status = r.status;
    res.set_content(r.body, r.content_type);
    for (const auto& [k, v] : r.headers) {
      res.set_header(k, v);
    }
    SetSecurityHeaders(res, options);
    if (r.content_type == "application/json") {
      res.set_header("Cache-Control", "no-store");
    }
  }

  // The gate every request passes before its route: Host, token, media type, body size.
  std::optional<HttpResponse> Refuse(const httplib::Request& req, const RouteOptions* route) const {
    if (options.token.empty() && !HostIsAllowed(req.get_header_value("Host"), options.allowed_hosts)) {
      return ErrorResponse(kStatusForbidden, "usage",
                           "this server answers only requests addressed to the loopback host (localhost, 127.0.0.1, "
                           "[::1]) or a name given with --allow-host",
                           "Host");
    }
    // Text that is not UTF-8 is refused before any route reads it (JSON is UTF-8, RFC 8259 §8.1).
    if (const auto bad = FirstNonUtf8(req.body)) {
      return ErrorResponse(kStatusBadRequest, "input",
                           "the body is not UTF-8 (byte " + std::to_string(*bad) + ")", "body");
    }
    if (FirstNonUtf8(req.path)) {
      return ErrorResponse(kStatusBadRequest, "input", "the path is not UTF-8", "path");
    }
    for (const auto& [k, v] : req.params) {
      if (FirstNonUtf8(k) || FirstNonUtf8(v)) {
        return ErrorResponse(kStatusBadRequest, "input", "a query parameter is not UTF-8", "query");
      }
    }
    // The page itself (static files: no data) is public, so a browser can open it in token
    // mode; every /api route but /health needs the token, from the header or the cookie.
    const bool is_static = route == nullptr && req.method == "GET" && req.path.rfind("/api/", 0) != 0;
    const bool is_public = (route != nullptr && route->is_public) || is_static;
    if (!options.token.empty() && !is_public) {
      const std::string auth = req.get_header_value("Authorization");
      const std::string bearer = "Bearer ";
      const bool by_header =
          auth.compare(0, bearer.size(), bearer) == 0 && SameSecret(auth.substr(bearer.size()), options.token);
      const std::optional<std::string> cookie = CookieValue(req.get_header_value("Cookie"), kTokenCookie);
      const bool by_cookie = cookie && SameSecret(*cookie, options.token);
      if (!by_header && !by_cookie) {
        return ErrorResponse(kStatusUnauthorized, "usage",
                             "a token is required (Authorization: Bearer <token>, or open the page once as "
                             "/#token=<token>)",
                             "Authorization");
      }
    }
    if (req.method == "POST") {
      const std::string type = Lower(req.get_header_value("Content-Type"));
      if (type.rfind("application/json", 0) != 0) {
        return ErrorResponse(kStatusUnsupportedMediaType, "usage", "the body must be JSON (Content-Type: application/json)",
                             "Content-Type");
      }
    }
    const std::size_t limit = route != nullptr && route->body_limit > 0 ? route->body_limit : options.body_limit;
    if (req.body.size() > limit) {
      return ErrorResponse(kStatusPayloadTooLarge, "input",
                           "the body is " + std::to_string(req.body.size()) + " bytes, more than this route's limit of " +
                               std::to_string(limit),
                           "body");
    }
    return std::nullopt;
  }

  std::optional<HttpResponse> StaticFile(const std::string& path) const {
    if (static_root.empty() || path.empty() || path[0] != '/' || path.find('\0') != std::string::npos ||
        path.find('\\') != std::string::npos) {
      return std::nullopt;
    }
    std::string rel = path.substr(1);
    if (rel.empty() || rel.back() == '/') {
      rel += "index.html";
    }
    // No segment may start with a dot: no "..", no ".env".
    std::stringstream parts(rel);
    std::string seg;
    while (std::getline(parts, seg, '/')) {
      if (seg.empty() || seg[0] == '.') {
        return std::nullopt;
      }
    }
    std::error_code ec;
    const fs::path file = fs::weakly_canonical(static_root / rel, ec);
    const std::string root = static_root.string() + "/";
    if (ec || file.string().compare(0, root.size(), root) != 0 || !fs::is_regular_file(file, ec)) {
      return std::nullopt;
    }
    std::optional<std::string> body = TryReadFileText(file.string());
    if (!body) {
      return std::nullopt;
    }
    HttpResponse r;
    r.content_type = ContentTypeOf(file);
    r.body = std::move(*body);
    return r;
  }

  void Dispatch(const httplib::Request& req, httplib::Response& res) const {
    HttpResponse out;
    // The answer's language (issue 26 req. 4), for HttpResponse::Json on this thread.
    struct LangScope {
      LangScope(Lang l, const Messages* m) {
        t_lang = l;
        t_messages = m;
      }
      ~LangScope() {
        t_lang = Lang::kEn;
        t_messages = nullptr;
      }
    } lang_scope(RequestLang(req), options.messages.get());
    try {
      const Route* route = nullptr;
      std::string capture;
      bool path_known = false;
      for (const auto& r : routes) {
        std::string c;
        if (Matches(r, req.path, &c)) {
          path_known = true;
          if (r.method == req.method) {
            route = &r;
            capture = c;
          }
        }
      }
      if (auto refused = Refuse(req, route != nullptr ? &route->options : nullptr)) {
        Send(res, *refused);
        return;
      }
      if (route == nullptr) {
        std::optional<HttpResponse> file;
        if (req.method == "GET" && !path_known && req.path.rfind("/api/", 0) != 0) {
          file = StaticFile(req.path);
        }
        if (file) {
          out = *file;
          const bool hashed = req.path.rfind("/assets/", 0) == 0;
          res.set_header("Cache-Control", hashed ? "public, max-age=31536000, immutable" : "no-cache");
        } else if (path_known) {
          out = ErrorResponse(kStatusMethodNotAllowed, "usage", req.method + " is not served on " + req.path);
        } else {
          out = ErrorResponse(kStatusNotFound, "usage", "nothing is served at this path", "path");
        }
      } else {
        // One client address may not hold every computation (issue 26 req. 8): past its share,
        // 503 at once, before any work. /health and other public routes are not counted.
        const bool counted = !route->options.is_public && !req.remote_addr.empty();
        if (counted && !gate.Enter(req.remote_addr, options.max_requests_per_address)) {
          Send(res, ErrorResponse(kStatusUnavailable, "environment",
                                  "too many requests in flight from this address (at most " +
                                      std::to_string(options.max_requests_per_address) +
                                      "): wait for one to finish",
                                  "max_requests_per_address"));
          return;
        }
        struct Leave {
          AddressGate* gate;
          std::string address;
          ~Leave() {
            if (gate != nullptr) gate->Leave(address);
          }
        } leave{counted ? &gate : nullptr, req.remote_addr};
        HttpRequest hr;
        hr.method = req.method;
        hr.path = req.path;
        hr.body = req.body;
        for (const auto& [k, v] : req.params) {
          if (k != "lang") {  // the answer's language, for every route (RequestLang)
            hr.query[k] = v;
          }
        }
        if (!route->param.empty()) {
          hr.params[route->param] = capture;
        }
        WorkBudget budget;
        budget.seconds = options.max_request_seconds;
        budget.deadline = std::chrono::steady_clock::now() +
                          std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                              std::chrono::duration<double>(options.max_request_seconds));
        budget.stopping = &stopping;
        // Work for a client that has gone ends (issue 26 req. 8): asked every 0.2 s of work.
        if (req.remote_port > 0 && port > 0) {
          auto watch = std::make_shared<ClientWatch>(port, req.remote_addr, req.remote_port);
          budget.client_gone = [watch] { return watch->Gone(); };
        }
        const ScopedWorkBudget scope(budget);
        out = route->handler(hr);
      }
    } catch (...) {
      out = ErrorResponse(std::current_exception());
    }
    Send(res, out);
  }
};

HttpServer::HttpServer(HttpServerOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
  const HttpServerOptions& o = impl_->options;
  if (!IsLoopbackAddress(o.bind) && o.token.empty()) {
    throw InputError("binding to " + o.bind + " (not loopback) needs a token: " + o.token_how +
                         ", and send Authorization: Bearer <token>",
                     "", 0, o.token_flag);
  }
  if (o.port < 0 || o.port > 65535) {
    throw InputError("must be a port number, 0 to 65535 (0: any free port)", "", 0, "--port");
  }
  if (!o.static_root.empty()) {
    std::error_code ec;
    impl_->static_root = fs::canonical(o.static_root, ec);
    if (ec || !fs::is_directory(impl_->static_root, ec)) {
      throw InputError("not a folder (the built page: web/dist after npm run build)", o.static_root, 0, "--web");
    }
  }
  const auto seconds = [](double s, time_t* sec, time_t* usec) {
    *sec = static_cast<time_t>(std::floor(s));
    *usec = static_cast<time_t>((s - std::floor(s)) * 1e6);
  };
  time_t sec = 0;
  time_t usec = 0;
  seconds(o.read_timeout_seconds, &sec, &usec);
  impl_->server.set_read_timeout(sec, usec);
  seconds(o.write_timeout_seconds, &sec, &usec);
  impl_->server.set_write_timeout(sec, usec);
  impl_->server.set_payload_max_length(o.body_limit);
  if (!(o.max_request_seconds > 0)) {
    throw InputError("must be more than 0", "", 0, "--max-request-seconds");
  }
  if (o.threads < 1) {
    throw InputError("must be at least 1", "", 0, "--threads");
  }
  if (o.max_connections_per_address < 1) {
    throw InputError("must be at least 1", "", 0, "--max-connections-per-address");
  }
  if (o.max_requests_per_address < 1) {
    throw InputError("must be at least 1", "", 0, "--max-requests-per-address");
  }
  if (!(o.keep_alive_seconds >= 1)) {
    throw InputError("must be at least 1 s", "", 0, "--keep-alive-seconds");
  }
  const auto threads = static_cast<std::size_t>(o.threads);
  impl_->server.new_task_queue = [threads] { return new ConnectionThreads(threads); };
  // Every connection holds a socket: the soft limit of open files up to the hard one, so 1,300
  // connections are not refused at 1,024.
  rlimit files{};
  if (getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max) {
    files.rlim_cur = files.rlim_max;
    setrlimit(RLIMIT_NOFILE, &files);
  }
  // A client keeps its connection (closed after keep_alive_seconds idle): no reconnection storms
  // through httplib's listen backlog, and no connection closed under a client that the
  // machine's load kept from sending its next request for a few seconds. Answers go out without
  // Nagle's delay.
  impl_->server.set_keep_alive_max_count(100000);
  impl_->server.set_keep_alive_timeout(static_cast<time_t>(std::ceil(o.keep_alive_seconds)));
  impl_->server.set_tcp_nodelay(true);
  Impl* impl = impl_.get();
  // The listening socket: SO_REUSEADDR (a restart binds at once) but not httplib's default
  // SO_REUSEPORT, under which a second server on the same port would start and silently share
  // the connections instead of failing "in use". The hook runs before bind; Start() widens the
  // backlog once bound.
  impl_->server.set_socket_options([impl](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    impl->listen_fd = sock;
  });
  const auto dispatch = [impl](const httplib::Request& req, httplib::Response& res) { impl->Dispatch(req, res); };
  impl_->server.Get(".*", dispatch);
  impl_->server.Post(".*", dispatch);
  impl_->server.Put(".*", dispatch);
  impl_->server.Delete(".*", dispatch);
  impl_->server.Patch(".*", dispatch);
  impl_->server.Options(".*", dispatch);
  // What httplib answers itself (a body over the limit, a malformed request): a JSON error too.
  const httplib::Server::HandlerWithResponse on_error = [impl](const httplib::Request&, httplib::Response& res) {
    if (!res.body.empty()) {
      return httplib::Server::HandlerResponse::Unhandled;
    }
    const std::string kind = res.status == kStatusPayloadTooLarge ? "input" : "usage";
    const std::string message = res.status == kStatusPayloadTooLarge ? "the body is larger than this server accepts"
                                                                     : "the request could not be read";
    const int status = res.status;
    impl->Send(res, ErrorResponse(status, kind, message, res.status == kStatusPayloadTooLarge ? "body" : ""));
    return httplib::Server::HandlerResponse::Handled;
  };
  impl_->server.set_error_handler(on_error);
  impl_->server.set_exception_handler([impl](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
    impl->Send(res, ErrorResponse(ep));
  });
}

HttpServer::~HttpServer() { Stop(); }

void HttpServer::Get(const std::string& pattern, HttpHandler handler, RouteOptions options) {
  impl_->routes.push_back(MakeRoute("GET", pattern, std::move(handler), options));
}

void HttpServer::Post(const std::string& pattern, HttpHandler handler, RouteOptions options) {
  impl_->routes.push_back(MakeRoute("POST", pattern, std::move(handler), options));
  // httplib refuses bodies over its one limit before any route runs: the largest route limit.
  std::size_t largest = impl_->options.body_limit;
  for (const auto& r : impl_->routes) {
    largest = std::max(largest, r.options.body_limit);
  }
  impl_->server.set_payload_max_length(largest);
}

std::vector<std::pair<std::string, std::string>> HttpServer::Routes() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& r : impl_->routes) {
    out.emplace_back(r.method, r.pattern);
  }
  return out;
}

int HttpServer::Start() {
  const HttpServerOptions& o = impl_->options;
  const std::string host = o.bind == "localhost" ? "127.0.0.1" : o.bind;
  if (o.port == 0) {
    impl_->port = impl_->server.bind_to_any_port(host);
  } else {
    impl_->port = impl_->server.bind_to_port(host, o.port) ? o.port : -1;
  }
  if (impl_->port <= 0) {
    throw EnvironmentError("cannot listen on " + o.bind + ":" + std::to_string(o.port) +
                           " (in use, or not an address of this machine)");
  }
  // Debian's compiled cpp-httplib listens with a backlog of 5 (CPPHTTPLIB_LISTEN_BACKLOG is fixed
  // when the library is built): 200 clients connecting at once overflow it and the kernel drops
  // their SYNs, which the clients see as errors. listen() on a socket that already listens sets
  // the new backlog (Linux: net/ipv4/af_inet.c inet_listen; capped by net.core.somaxconn).
  if (impl_->listen_fd != INVALID_SOCKET && ::listen(impl_->listen_fd, kListenBacklog) != 0) {
    std::cerr << "warning: the listen backlog stays at httplib's 5 (listen: " << std::strerror(errno) << ")\n";
  }
  return impl_->port;
}

void HttpServer::Run() {
  const ConnectionGuard guard(impl_->port, impl_->options.max_connections_per_address);
  impl_->server.listen_after_bind();
}

void HttpServer::Stop() {
  if (impl_) {
    impl_->stopping = true;  // computations in flight check it (CheckWorkBudget) and end
  }
  if (impl_ && impl_->server.is_running()) {
    impl_->server.stop();
  }
}

int HttpServer::Port() const { return impl_->port; }

HttpResponse HttpServer::Answer(const HttpRequest& request, const std::map<std::string, std::string>& headers) const {
  httplib::Request req;
  req.method = request.method;
  req.path = request.path;
  req.body = request.body;
  for (const auto& [k, v] : headers) {
    req.set_header(k, v);
  }
  for (const auto& [k, v] : request.query) {
    req.params.emplace(k, v);
  }
  httplib::Response res;
  impl_->Dispatch(req, res);
  HttpResponse out;
  out.status = res.status;
  out.content_type = res.get_header_value("Content-Type");
  out.body = res.body;
  return out;
}

const HttpServerOptions& HttpServer::Options() const { return impl_->options; }

}  // namespace gpuplan
