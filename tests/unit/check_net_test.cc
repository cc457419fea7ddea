// The link test (docs/check.md §12): the pacing arithmetic the loopback test relies on, HOST:PORT
// reading, the verdicts, the report's `net` object both ways and the comparison of two links.
// The real listener and client over loopback are tests/integration/check_net_test.sh.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <sstream>

#include "check/compare.h"
#include "check/net.h"
#include "check/net_listen.h"
#include "check/render/check_json.h"
#include "check/render/check_markdown.h"
#include "core/error.h"
#include "test_paths.h"

namespace gpuplan {
namespace {

// A sender that takes 4 KiB at a time and sleeps exactly the wait it is told: after T simulated
// seconds it has passed burst + rate x T bytes (to within one chunk), whatever the chunk size.
TEST(NetPacing, BucketLetsThroughBurstPlusRateTimesTime) {
  const double rate = 25e6;     // 200 Mbit/s in bytes/s: 200e6 / 8
  const double burst = 65536;
  TokenBucket b(rate, burst);
  const double chunk = 4096;
  double now = 0;
  double passed = 0;
  while (now < 2.0) {
    now += b.Take(chunk, now);
    passed += chunk;
  }
  // At 2 s: 65536 + 25e6 x 2 = 50,065,536 bytes, give or take the chunk that crossed 2 s.
  EXPECT_NEAR(passed, 50065536.0, chunk);
  EXPECT_LE(passed, NetPacedBytesBound(rate, burst, now) + chunk);
}

TEST(NetPacing, FullBucketPassesTheBurstAtOnceThenTheDebtIsWaited) {
  TokenBucket b(1e6, 1000);
  EXPECT_EQ(b.Take(1000, 0), 0);        // the burst, no wait
  EXPECT_DOUBLE_EQ(b.Take(500, 0), 500 / 1e6);  // 500 bytes of debt at 1 MB/s: 0.5 ms
  // Long idle refills only up to the burst: 10 s later, 1000 pass, 1 more waits 1 us.
  EXPECT_EQ(b.Take(1000, 10), 0);
  EXPECT_DOUBLE_EQ(b.Take(1, 10), 1 / 1e6);
}

TEST(NetPacing, UnitsAndTheLoopbackTolerance) {
  EXPECT_DOUBLE_EQ(MbpsToBytesPerSecond(200), 25e6);
  EXPECT_DOUBLE_EQ(GbitPerSecond(25000000, 1), 0.2);
  EXPECT_EQ(GbitPerSecond(100, 0), 0);
  // The integration test's window is about 2 s; the burst adds at most burst / T to the rate:
  // 64 KiB / 2 s = 32.8 kB/s, 0.13% of 25 MB/s. Its 15% tolerance is for scheduling noise.
  EXPECT_LT(NetPacedBytesBound(25e6, kNetPaceBurstBytes, 2) / 2 / 25e6 - 1, 0.002);
}

TEST(NetPacing, Percentile90IsTheNearestRank) {
  std::vector<double> v;
  for (int i = 20; i >= 1; --i) {
    v.push_back(i);
  }
  EXPECT_EQ(Percentile90(v), 18);  // ceil(0.9 x 20) = 18th smallest
  EXPECT_EQ(Percentile90({5}), 5);
  EXPECT_EQ(Percentile90({}), 0);
  EXPECT_EQ(Median(v), 10.5);
}

TEST(NetEndpoint, ReadsHostAndPort) {
  NetEndpoint e = ParseNetEndpoint("10.0.0.5", "net", false);
  EXPECT_EQ(e.host, "10.0.0.5");
  EXPECT_EQ(e.port, 5201);
  e = ParseNetEndpoint("gpu.example:7000", "net", false);
  EXPECT_EQ(e.host, "gpu.example");
  EXPECT_EQ(e.port, 7000);
  e = ParseNetEndpoint("[::1]:5300", "net", false);
  EXPECT_EQ(e.host, "::1");
  EXPECT_EQ(e.port, 5300);
  EXPECT_EQ(e.Text(), "[::1]:5300");
  e = ParseNetEndpoint("5300", "net_listen", true);
  EXPECT_EQ(e.host, "127.0.0.1");
  EXPECT_EQ(e.port, 5300);
  e = ParseNetEndpoint("0.0.0.0:0", "net_listen", true);  // any free port, for a listener
  EXPECT_EQ(e.port, 0);
}

TEST(NetEndpoint, BadPortsNameTheOption) {
  for (const char* bad : {"h:0", "h:70000", "h:", "h:abc", "h:-1", ":5201", "", "[::1"}) {
    try {
      ParseNetEndpoint(bad, "net", false);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const InputError& e) {
      EXPECT_EQ(e.field(), "net") << bad;
      EXPECT_TRUE(e.names_option());
    }
  }
  EXPECT_THROW(ParseNetEndpoint("127.0.0.1:65536", "net_listen", true), InputError);
}

TEST(NetListen, OffLoopbackNeedsAToken) {
  try {
    NetListenOptionsOf("0.0.0.0:5201", std::nullopt, "");
    ADD_FAILURE() << "a listener on 0.0.0.0 without a token";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "net_token");
  }
  EXPECT_EQ(NetListenOptionsOf("0.0.0.0:5201", std::nullopt, "s3cret").at.host, "0.0.0.0");
  EXPECT_EQ(NetListenOptionsOf("5201", 200.0, "").at.host, "127.0.0.1");
}

TEST(NetListen, UnreachableListenerIsAnEnvironmentError) {
  // A port that was just free: bind one, note it, close it.
  int port = 0;
  {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    socklen_t len = sizeof a;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    port = ntohs(a.sin_port);
    ::close(fd);
  }
  NetClientRequest q;
  q.peer = {"127.0.0.1", port};
  q.seconds = 1;
  try {
    MeasureLink(q);
    ADD_FAILURE() << "a closed port was measured";
  } catch (const EnvironmentError& e) {
    EXPECT_NE(std::string(e.what()).find("127.0.0.1:" + std::to_string(port)), std::string::npos) << e.what();
  }
}

NetLink Link(const std::string& host, double up, double down, double rtt) {
  NetLink l;
  l.host = host;
  l.streams = 4;
  l.seconds = 2;
  l.rtt_ms = rtt;
  l.rtt_p90_ms = rtt * 1.5;
  l.pings = 20;
  l.connect_ms = rtt;
  l.throughput_gbps = up;
  l.reverse_gbps = down;
  l.throughput_bytes = static_cast<uint64_t>(up * 1e9 / 8 * 2);
  l.reverse_bytes = static_cast<uint64_t>(down * 1e9 / 8 * 2);
  l.transfer_bytes = 1ull << 30;
  l.transfer_measured_bytes = 1ull << 29;
  l.transfer_seconds = 42.5;
  l.transfer_extrapolated = true;
  l.listener_rate_mbps = 200;
  return l;
}

TEST(NetVerdicts, FiguresOnlyWithoutThresholdsFailPastThem) {
  const NetLink l = Link("a:5201", 0.2, 0.9, 30);
  auto free = JudgeLink(l, std::nullopt, std::nullopt);
  ASSERT_EQ(free.size(), 4u);
  EXPECT_EQ(free[0].name, "net_rtt");
  EXPECT_EQ(free[1].name, "net_throughput");
  EXPECT_EQ(free[2].name, "net_reverse");
  EXPECT_EQ(free[3].name, "net_transfer");
  for (const auto& r : free) {
    EXPECT_EQ(r.status, CheckStatus::kPass) << r.name;
  }
  EXPECT_EQ(free[1].measured, 0.2);
  EXPECT_EQ(free[1].unit, "Gbit/s");
  EXPECT_EQ(free[3].measured, 42.5);
  EXPECT_NE(free[3].evidence.find("extrapolated"), std::string::npos);
  // 0.5 Gbit/s needed: the upload (0.2) fails, the download (0.9) passes; 20 ms allowed: 30 fails.
  auto held = JudgeLink(l, 0.5, 20.0);
  EXPECT_EQ(held[0].status, CheckStatus::kFail);
  EXPECT_EQ(held[1].status, CheckStatus::kFail);
  EXPECT_EQ(held[2].status, CheckStatus::kPass);
  EXPECT_EQ(held[1].expected, 0.5);
}

CheckReport NetReport(const NetLink& l) {
  CheckReport r;
  r.mode = "default";
  r.started = "2027-03-01T10:00:00Z";
  r.finished = "2027-03-01T10:01:00Z";
  r.net = l;
  for (auto& t : JudgeLink(l, std::nullopt, std::nullopt)) {
    r.Add(t);
  }
  return r;
}

TEST(NetReport, JsonBothWaysAndStrict) {
  const NetLink l = Link("gpu.example:5201", 0.2, 0.9, 30);
  const nlohmann::json j = CheckReportToJson(NetReport(l));
  EXPECT_EQ(j["net"]["throughput_gbps"], 0.2);
  EXPECT_EQ(j["net"]["reverse_gbps"], 0.9);
  EXPECT_EQ(j["net"]["rtt_ms"], 30);
  EXPECT_EQ(j["net"]["host"], "gpu.example:5201");
  const CheckReport back = ReportFromJson(j, "r.json");
  ASSERT_TRUE(back.net.has_value());
  EXPECT_EQ(back.net->throughput_bytes, l.throughput_bytes);
  EXPECT_EQ(back.net->transfer_seconds, 42.5);
  EXPECT_TRUE(back.net->transfer_extrapolated);
  EXPECT_EQ(back.net->listener_rate_mbps, 200);
  // A report without the link test has "net": null and reads back without one.
  CheckReport plain;
  plain.mode = "default";
  EXPECT_TRUE(CheckReportToJson(plain)["net"].is_null());
  EXPECT_FALSE(ReportFromJson(CheckReportToJson(plain), "p.json").net.has_value());
  auto expect_error = [](nlohmann::json bad, const std::string& field) {
    try {
      ReportFromJson(bad, "r.json");
      ADD_FAILURE() << "accepted " << bad["net"].dump();
    } catch (const InputError& e) {
      EXPECT_EQ(e.field(), field);
    }
  };
  nlohmann::json unknown = j;
  unknown["net"]["rtt"] = 1;
  expect_error(unknown, "net.rtt");
  nlohmann::json missing = j;
  missing["net"].erase("reverse_gbps");
  expect_error(missing, "net.reverse_gbps");
  nlohmann::json streams = j;
  streams["net"]["streams"] = 0;
  expect_error(streams, "net.streams");
  nlohmann::json negative = j;
  negative["net"]["rtt_ms"] = -1;
  expect_error(negative, "net.rtt_ms");
  nlohmann::json not_object = j;
  not_object["net"] = "fast";
  expect_error(not_object, "net");
}

TEST(NetReport, TwoProvidersLinksSideBySide) {
  const NamedReport a{"a.json", NetReport(Link("a.example:5201", 0.2, 0.9, 30))};
  const NamedReport b{"b.json", NetReport(Link("b.example:5201", 0.5, 0.4, 12))};
  const ComparisonResult c = CompareReports({a, b}, CompareReportsRequest{}, test::Catalog());
  ASSERT_EQ(c.machines.size(), 2u);
  EXPECT_EQ(c.machines[0].label, "link to a.example:5201");
  EXPECT_EQ(c.machines[1].label, "link to b.example:5201");
  std::map<std::string, std::pair<double, double>> rows;
  for (const auto& r : c.rows) {
    ASSERT_TRUE(r.cells[0] && r.cells[1] && r.cells[0]->measured && r.cells[1]->measured) << r.test;
    rows[r.test] = {*r.cells[0]->measured, *r.cells[1]->measured};
  }
  EXPECT_EQ(rows["net_throughput"], std::make_pair(0.2, 0.5));
  EXPECT_EQ(rows["net_reverse"], std::make_pair(0.9, 0.4));
  EXPECT_EQ(rows["net_rtt"], std::make_pair(30.0, 12.0));
  std::ostringstream md;
  CheckReportToMarkdown(a.report, md);
  EXPECT_NE(md.str().find("net_throughput"), std::string::npos);
  EXPECT_NE(md.str().find("0.2 Gbit/s"), std::string::npos);
}

}  // namespace
}  // namespace gpuplan
