// The HTTP wrapper's error answers (src/http/http_server.h), in process through
// HttpServer::Answer: no socket, the same gate, routes and error mapping as a connection.
#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <future>
#include <map>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/work_budget.h"
#include "read/json_fields.h"
#include "http/http_server.h"

namespace gpuplan {
namespace {

const std::map<std::string, std::string> kJsonHeaders = {{"Host", "127.0.0.1:8080"},
                                                         {"Content-Type", "application/json"}};

HttpRequest Post(const std::string& path, const std::string& body) {
  HttpRequest r;
  r.method = "POST";
  r.path = path;
  r.body = body;
  return r;
}

// fuzz_serve_api (docs/fuzzing.md, "Found and fixed"): an error message quoting bytes of the
// request that are not UTF-8 made the JSON writer throw while the error was being answered; the
// exception escaped Dispatch, and a served connection got 500 "internal error" instead of 400.
TEST(HttpServerErrors, MessageWithBytesThatAreNotUtf8IsAnswered) {
  HttpServer server(HttpServerOptions{});
  server.Post("/echo", [](const HttpRequest&) -> HttpResponse {
    throw InputError("no offer named 's\xFF\xFFterm'", "offers", 3, "offers[0]");
  });
  const HttpResponse r = server.Answer(Post("/echo", "{}"), kJsonHeaders);
  EXPECT_EQ(r.status, 400);
  const nlohmann::json j = nlohmann::json::parse(r.body);
  EXPECT_EQ(j["error"]["kind"], "input");
  EXPECT_EQ(j["error"]["line"], 3);
  // Each bad byte becomes U+FFFD (EF BF BD).
  EXPECT_EQ(j["error"]["message"], "no offer named 's\xEF\xBF\xBD\xEF\xBF\xBDterm'");
}

TEST(HttpServerErrors, BodyWithBytesThatAreNotUtf8IsABadRequest) {
  HttpServer server(HttpServerOptions{});
  server.Post("/parse", [](const HttpRequest& req) {
    return HttpResponse::Json(ParseJsonText(req.body, "body"));
  });
  // The fuzzer's kind of body: 0xFF bytes inside a JSON string (the parser's message quotes them).
  const HttpResponse r = server.Answer(Post("/parse", "{\"offers\": \"s\xFF\xFF\"}"), kJsonHeaders);
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(nlohmann::json::parse(r.body)["error"]["kind"], "input");
  EXPECT_EQ(server.Answer(Post("/parse", "{\"a\": 1}"), kJsonHeaders).body, "{\"a\":1}");
}

// Issue 26 req. 8, a cap per client address: with one request of 127.0.0.1 running (its route
// waits), a second is refused at once with 503 naming the option, /health (public) is still
// answered, and once the first ends the address may ask again. A real server on a free port.
TEST(HttpServerLimits, OneAddressCannotHoldMoreThanItsShare) {
  HttpServerOptions o;
  o.port = 0;
  o.max_requests_per_address = 1;
  HttpServer server(o);
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<int> entered{0};
  server.Get("/slow", [&](const HttpRequest&) {
    ++entered;
    released.wait();
    return HttpResponse::Json({{"ok", true}});
  });
  RouteOptions pub;
  pub.is_public = true;
  server.Get("/health", [](const HttpRequest&) { return HttpResponse::Json({{"ok", true}}); }, pub);
  const int port = server.Start();
  std::thread run([&] { server.Run(); });
  const httplib::Headers host = {{"Host", "127.0.0.1"}};
  auto first = std::async(std::launch::async, [&] {
    httplib::Client c("127.0.0.1", port);
    return c.Get("/slow", host);
  });
  while (entered.load() == 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  httplib::Client c("127.0.0.1", port);
  const auto refused = c.Get("/slow", host);
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 503);
  EXPECT_EQ(nlohmann::json::parse(refused->body)["error"]["field"], "max_requests_per_address");
  const auto health = c.Get("/health", host);
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  release.set_value();
  const auto done = first.get();
  ASSERT_TRUE(done);
  EXPECT_EQ(done->status, 200);
  const auto again = c.Get("/slow", host);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->status, 200);
  server.Stop();
  run.join();
}

// Issue 26 req. 8, "computation stops when the client leaves": a route that works until its
// budget says stop (CheckWorkBudget at its loop head, as the layout search does) ends with "the
// client closed the connection" soon after its client gives up (a 0.3 s read timeout), not at
// the 30 s deadline. A real server on a free port.
TEST(HttpServerLimits, WorkEndsWhenTheClientLeaves) {
  HttpServerOptions o;
  o.port = 0;
  HttpServer server(o);
  std::promise<std::string> ended;
  auto why = ended.get_future();
  server.Get("/spin", [&](const HttpRequest&) -> HttpResponse {
    try {
      for (;;) {
        CheckWorkBudget();
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
    } catch (const std::exception& e) {
      ended.set_value(e.what());
      throw;
    }
  });
  const int port = server.Start();
  std::thread run([&] { server.Run(); });
  const auto start = std::chrono::steady_clock::now();
  {
    httplib::Client c("127.0.0.1", port);
    c.set_read_timeout(0, 300000);
    EXPECT_FALSE(c.Get("/spin", {{"Host", "127.0.0.1"}}));  // gives up after 0.3 s and closes
  }
  ASSERT_EQ(why.wait_for(std::chrono::seconds(5)), std::future_status::ready);
  EXPECT_NE(why.get().find("the client closed the connection"), std::string::npos);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 2.0);
  server.Stop();
  run.join();
}

}  // namespace
}  // namespace gpuplan
