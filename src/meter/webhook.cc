#include "meter/webhook.h"

#include <httplib.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <nlohmann/json.hpp>
#include <utility>

#include "core/error.h"
#include "read/yaml_fields.h"

namespace gpuplan {

using nlohmann::json;

const char* ToString(WebhookFormat f) {
  switch (f) {
    case WebhookFormat::kGeneric:
      return "generic";
    case WebhookFormat::kWeCom:
      return "wecom";
    case WebhookFormat::kDingTalk:
      return "dingtalk";
    case WebhookFormat::kFeishu:
      return "feishu";
  }
  return "?";
}

std::string HmacSha256Base64(const std::string& key, const std::string& message) {
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int mac_len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), reinterpret_cast<const unsigned char*>(message.data()),
       message.size(), mac, &mac_len);
  std::string out(4 * ((mac_len + 2) / 3) + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), mac, static_cast<int>(mac_len));
  out.resize(static_cast<std::size_t>(n));
  return out;
}

namespace {

// Percent-encoding of a query value (RFC 3986 unreserved characters kept).
std::string QueryEscape(const std::string& s) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
        c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

// The chat line: a prefix that a DingTalk keyword rule can match ("gpuplan"), then the summary.
std::string ChatText(const Alert& a) {
  const std::string tag = a.notice == "end"      ? "ended"
                          : a.notice == "digest" ? "digest"
                          : a.severity == "critical" ? "CRITICAL"
                                                     : "warning";
  return "[gpuplan " + tag + "] " + a.summary + (a.repeat ? " (still)" : "");
}

}  // namespace

WebhookMessage BuildWebhookMessage(const Alert& a, const WebhookTarget& t, UtcMillis now) {
  WebhookMessage m;
  m.url = t.url;
  json body;
  switch (t.format) {
    case WebhookFormat::kGeneric:
      body = AlertFieldsJson(a);
      body["source"] = "gpuplan";
      body["type"] = a.notice.empty() ? "alert" : a.notice;  // alert, end or digest
      break;
    case WebhookFormat::kWeCom:
      // WeCom group robot: {"msgtype":"text","text":{"content":...}}; no signing (the key in the
      // URL is the secret).
      body = {{"msgtype", "text"}, {"text", {{"content", ChatText(a)}}}};
      break;
    case WebhookFormat::kDingTalk:
      // DingTalk custom robot: same body shape; signed robots take timestamp (ms) and
      // sign = urlencode(base64(HMAC-SHA256(key = secret, message = timestamp + "\n" + secret)))
      // as query parameters.
      body = {{"msgtype", "text"}, {"text", {{"content", ChatText(a)}}}};
      if (!t.secret.empty()) {
        const std::string ts = std::to_string(UnixMillis(now));
        m.url += (m.url.find('?') == std::string::npos ? "?" : "&");
        m.url += "timestamp=" + ts + "&sign=" + QueryEscape(HmacSha256Base64(t.secret, ts + "\n" + t.secret));
      }
      break;
    case WebhookFormat::kFeishu:
      // Feishu custom bot: {"msg_type":"text","content":{"text":...}}; signed bots add timestamp
      // (seconds, as a string) and sign = base64(HMAC-SHA256(key = timestamp + "\n" + secret,
      // message = "")) to the body.
      body = {{"msg_type", "text"}, {"content", {{"text", ChatText(a)}}}};
      if (!t.secret.empty()) {
        const std::string ts = std::to_string(UnixMillis(now) / 1000);
        body["timestamp"] = ts;
        body["sign"] = HmacSha256Base64(ts + "\n" + t.secret, "");
      }
      break;
  }
  m.body = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);  // a command line need not be UTF-8
  return m;
}

std::vector<WebhookTarget> WebhookTargetsFromYaml(const std::string& text, const std::string& file) {
  const YAML::Node root = ParseYamlText(text, file);
  std::vector<WebhookTarget> out;
  if (!root.IsMap() || !root["webhooks"]) {
    return out;
  }
  const YAML::Node list = root["webhooks"];
  if (!list.IsSequence()) {
    throw InputError("expected a list of webhooks (docs/meter-alerts.md)", file, YamlLine(list), "webhooks");
  }
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string path = "webhooks[" + std::to_string(i) + "].";
    if (!list[i].IsMap()) {
      throw InputError("expected a mapping with format and url", file, YamlLine(list[i]), path);
    }
    const YamlMap m(list[i], path, file);
    m.Only({"format", "url", "secret", "name"});
    WebhookTarget t;
    const std::string format = m.Str("format", true);
    bool known = false;
    for (WebhookFormat f : {WebhookFormat::kGeneric, WebhookFormat::kWeCom, WebhookFormat::kDingTalk,
                            WebhookFormat::kFeishu}) {
      if (format == ToString(f)) {
        t.format = f;
        known = true;
      }
    }
    if (!known) {
      m.Fail("format", "unknown webhook format '" + format + "': generic, wecom, dingtalk or feishu");
    }
    t.url = m.Str("url", true);
    if (t.url.rfind("http://", 0) != 0 && t.url.rfind("https://", 0) != 0) {
      m.Fail("url", "expected an http:// or https:// URL");
    }
    t.secret = m.Str("secret", false);
    if (!t.secret.empty() && (t.format == WebhookFormat::kGeneric || t.format == WebhookFormat::kWeCom)) {
      m.Fail("secret", std::string(ToString(t.format)) + " webhooks are not signed (the URL's key is the secret)");
    }
    t.name = m.Str("name", false, format);
    out.push_back(std::move(t));
  }
  return out;
}

namespace {

std::chrono::time_point<std::chrono::steady_clock, std::chrono::milliseconds> SteadyNow() {
  return std::chrono::time_point_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now());
}

UtcMillis WallNow() { return std::chrono::time_point_cast<std::chrono::milliseconds>(std::chrono::system_clock::now()); }

}  // namespace

WebhookSender::WebhookSender(std::vector<WebhookTarget> targets, WebhookSenderOptions options, Log log)
    : targets_(std::move(targets)), options_(options), log_(std::move(log)) {
  if (!targets_.empty()) {
    thread_ = std::thread([this] { Run(); });
  }
}

WebhookSender::~WebhookSender() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) {
    thread_.join();
  }
  if (!queue_.empty() && log_) {
    log_("webhooks: " + std::to_string(queue_.size()) + " alert deliveries not sent (stopping)");
  }
}

void WebhookSender::Send(const Alert& alert) {
  if (targets_.empty()) {
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (std::size_t t = 0; t < targets_.size(); ++t) {
      if (queue_.size() >= options_.queue_limit) {
        queue_.pop_front();
        ++stats_.dropped;
      }
      queue_.push_back(Pending{alert, t, 0, SteadyNow()});
    }
  }
  cv_.notify_all();
}

bool WebhookSender::Flush(double timeout_seconds) {
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_for(lock, std::chrono::duration<double>(timeout_seconds),
                      [this] { return queue_.empty() && in_flight_ == 0; });
}

WebhookSender::Stats WebhookSender::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

bool WebhookSender::Attempt(Pending& p, std::string& why) const {
  const WebhookTarget& t = targets_[p.target];
  const WebhookMessage m = BuildWebhookMessage(p.alert, t, WallNow());
  // scheme://host[:port] and the rest (path and query), as httplib's Client takes them.
  const std::size_t host_start = m.url.find("://") + 3;
  const std::size_t path_start = m.url.find('/', host_start);
  const std::string origin = m.url.substr(0, path_start);
  const std::string path = path_start == std::string::npos ? "/" : m.url.substr(path_start);
  httplib::Client client(origin);
  const auto secs = static_cast<time_t>(std::ceil(options_.timeout_seconds));
  client.set_connection_timeout(secs);
  client.set_read_timeout(secs);
  client.set_write_timeout(secs);
  const auto res = client.Post(path, m.body, "application/json");
  if (!res) {
    why = httplib::to_string(res.error());
    return false;
  }
  if (res->status < 200 || res->status >= 300) {
    why = "HTTP " + std::to_string(res->status);
    return false;
  }
  // The robots answer HTTP 200 with an error code in the body (a bad signature, too many
  // messages): WeCom and DingTalk {"errcode": 0}, Feishu {"code": 0}.
  if (t.format != WebhookFormat::kGeneric) {
    const json r = json::parse(res->body, nullptr, false);
    for (const char* key : {"errcode", "code"}) {
      if (r.is_object() && r.contains(key) && r[key].is_number_integer() && r[key].get<int64_t>() != 0) {
        why = std::string(key) + " " + std::to_string(r[key].get<int64_t>()) +
              (r.contains("errmsg") ? ": " + r["errmsg"].dump() : r.contains("msg") ? ": " + r["msg"].dump() : "");
        return false;
      }
    }
  }
  return true;
}

void WebhookSender::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    if (queue_.empty()) {
      cv_.wait(lock, [this] { return stop_ || !queue_.empty(); });
      continue;
    }
    const auto due = std::min_element(queue_.begin(), queue_.end(),
                                      [](const Pending& a, const Pending& b) { return a.next < b.next; });
    const std::chrono::milliseconds wait = due->next - SteadyNow();
    if (wait.count() > 0) {
      cv_.wait_for(lock, wait);
      continue;
    }
    Pending p = std::move(*due);
    queue_.erase(due);
    ++in_flight_;
    lock.unlock();
    std::string why;
    const bool ok = Attempt(p, why);
    ++p.attempts;
    const std::string who = "webhook " + targets_[p.target].name + ": ";
    std::string message;
    lock.lock();
    --in_flight_;
    if (ok) {
      ++stats_.delivered;
    } else if (p.attempts >= options_.max_attempts) {
      ++stats_.given_up;
      message = who + "gave up after " + std::to_string(p.attempts) + " attempts (" + why + "): " + p.alert.summary;
    } else {
      ++stats_.retried;
      const double backoff = std::min(options_.max_backoff_seconds,
                                      options_.first_backoff_seconds * std::pow(2.0, p.attempts - 1));
      p.next = SteadyNow() + std::chrono::milliseconds{static_cast<int64_t>(backoff * 1000)};
      message = who + "attempt " + std::to_string(p.attempts) + " failed (" + why + "), retrying in " +
                std::to_string(static_cast<int64_t>(std::llround(backoff))) + " s";
      queue_.push_back(std::move(p));
    }
    cv_.notify_all();
    if (!message.empty() && log_) {
      lock.unlock();
      log_(message);
      lock.lock();
    }
  }
}

}  // namespace gpuplan
