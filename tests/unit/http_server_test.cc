// The HTTP wrapper's error answers (src/serve/http_server.h), in process through
// HttpServer::Answer: no socket, the same gate, routes and error mapping as a connection.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "read/json_fields.h"
#include "serve/http_server.h"

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

}  // namespace
}  // namespace gpuplan
