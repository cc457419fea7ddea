// Delivery of meter alerts to webhooks (docs/meter-alerts.md): a generic JSON body, and the group
// robots of WeCom (企业微信), DingTalk (钉钉, with its HMAC-SHA256 "加签" signing) and Feishu
// (飞书, with its signature check). The sender is a thread of its own with a queue: Send never
// waits on the network, a failed delivery is retried with exponential backoff, and a full queue
// drops the oldest alert and counts it, so sampling is never held up by a chat server.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "meter/alerts.h"

namespace gpuplan {

enum class WebhookFormat { kGeneric, kWeCom, kDingTalk, kFeishu };
const char* ToString(WebhookFormat f);  // "generic", "wecom", "dingtalk", "feishu"

struct WebhookTarget {
  std::string name;  // for the log; defaults to the format
  WebhookFormat format = WebhookFormat::kGeneric;
  std::string url;     // http:// or https://
  std::string secret;  // DingTalk "SEC..." / Feishu signing secret; empty: unsigned
};

// Reads the `webhooks:` list of an alerts file; InputError names file, line and key.
std::vector<WebhookTarget> WebhookTargetsFromYaml(const std::string& text, const std::string& file);

// What is POSTed (application/json) for one alert at `now` (the signing time).
struct WebhookMessage {
  std::string url;   // the target's URL, with DingTalk's timestamp and sign added when signed
  std::string body;  // JSON
};
WebhookMessage BuildWebhookMessage(const Alert& alert, const WebhookTarget& target, UtcMillis now);

// base64(HMAC-SHA256(key, message)) with OpenSSL.
std::string HmacSha256Base64(const std::string& key, const std::string& message);

struct WebhookSenderOptions {
  int max_attempts = 6;                // then the alert is given up (and logged)
  double first_backoff_seconds = 2;    // 2, 4, 8, ... s between attempts
  double max_backoff_seconds = 300;
  double timeout_seconds = 10;         // connect, read and write timeout of one attempt
  std::size_t queue_limit = 1000;      // pending deliveries; the oldest is dropped beyond it
};

class WebhookSender {
 public:
  using Log = std::function<void(const std::string&)>;
  WebhookSender(std::vector<WebhookTarget> targets, WebhookSenderOptions options, Log log);
  ~WebhookSender();  // stops at once; pending deliveries are logged as not sent
  WebhookSender(const WebhookSender&) = delete;
  WebhookSender& operator=(const WebhookSender&) = delete;

  // Queues the alert for every target; returns at once.
  void Send(const Alert& alert);
  // Waits until nothing is pending or `timeout_seconds` passed; true when nothing is pending.
  bool Flush(double timeout_seconds);

  struct Stats {
    uint64_t delivered = 0;
    uint64_t retried = 0;    // attempts that failed and were tried again
    uint64_t given_up = 0;   // deliveries that failed max_attempts times
    uint64_t dropped = 0;    // pushed out of a full queue
  };
  Stats stats() const;

 private:
  // The steady clock, to the millisecond.
  using SteadyMillis = std::chrono::time_point<std::chrono::steady_clock, std::chrono::milliseconds>;
  struct Pending {
    Alert alert;
    std::size_t target = 0;
    int attempts = 0;
    SteadyMillis next{};  // when the next attempt is due
  };
  void Run();
  bool Attempt(Pending& p, std::string& why) const;

  std::vector<WebhookTarget> targets_;
  WebhookSenderOptions options_;
  Log log_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Pending> queue_;
  int in_flight_ = 0;
  bool stop_ = false;
  Stats stats_;
  std::thread thread_;
};

}  // namespace gpuplan
