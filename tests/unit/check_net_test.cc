// The link test (docs/check.md §12): the pacing arithmetic the loopback test relies on, HOST:PORT
// reading, the verdicts, the report's `net` object both ways and the comparison of two links.
// The real listener and client over loopback are tests/integration/check_net_test.sh.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <csignal>
#include <fstream>
#include <sstream>

#include "check/compare.h"
#include "check/net.h"
#include "check/net_iperf.h"
#include "check/net_listen.h"
#include "check/worker_runner.h"
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

// --- iperf3 (--net-tool iperf3). The fixtures are real iperf 3.12 -J outputs over loopback
// (tests/fixtures/net/README.md says how they were made); each figure expected is read from the
// file here by its own JSON pointer, so the parser is shown to pick the receiver's sum.

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const NetEndpoint kIperfPeer{"127.0.0.1", 5299};

TEST(NetIperf, ForwardRunReadsTheReceiversSumOfBothStreams) {
  const std::string text = ReadText(test::Fixture("net/iperf3-forward-P2-t1.json"));
  const nlohmann::json j = nlohmann::json::parse(text);
  const IperfRun r = ParseIperfJson(text, kIperfPeer, 2);
  EXPECT_EQ(r.streams, 2);
  EXPECT_EQ(r.bits_per_second, j.at(nlohmann::json::json_pointer("/end/sum_received/bits_per_second")).get<double>());
  EXPECT_EQ(r.bytes, j.at(nlohmann::json::json_pointer("/end/sum_received/bytes")).get<uint64_t>());
  EXPECT_EQ(r.seconds, j.at(nlohmann::json::json_pointer("/end/sum_received/seconds")).get<double>());
  EXPECT_EQ(r.sent_bytes, j.at(nlohmann::json::json_pointer("/end/sum_sent/bytes")).get<uint64_t>());
  // Hand-copied from the file: the receiver's sum 7312151440.726501 bit/s over 924057600 bytes;
  // the sender's sum (7379134083.844577) and one stream's receiver figure (3650889797.3556433)
  // are not it.
  EXPECT_DOUBLE_EQ(r.bits_per_second, 7312151440.726501);
  EXPECT_EQ(r.bytes, 924057600u);
  EXPECT_NE(r.bits_per_second, j.at(nlohmann::json::json_pointer("/end/sum_sent/bits_per_second")).get<double>());
  EXPECT_NE(r.bits_per_second,
            j.at(nlohmann::json::json_pointer("/end/streams/0/receiver/bits_per_second")).get<double>());
  // This side sent: both streams' mean_rtt (microseconds) in ms: 793 and 812 in the file.
  ASSERT_EQ(r.sender_rtt_ms.size(), 2u);
  EXPECT_DOUBLE_EQ(r.sender_rtt_ms[0], j.at(nlohmann::json::json_pointer("/end/streams/0/sender/mean_rtt")).get<double>() / 1000);
  EXPECT_DOUBLE_EQ(r.sender_rtt_ms[1], 0.812);
  EXPECT_FALSE(r.interrupted);
}

TEST(NetIperf, ReverseRunReadsWhatArrivedHereAndHasNoRttOfOurs) {
  const std::string text = ReadText(test::Fixture("net/iperf3-reverse-P2-t1.json"));
  const nlohmann::json j = nlohmann::json::parse(text);
  ASSERT_EQ(j.at(nlohmann::json::json_pointer("/start/test_start/reverse")).get<int>(), 1);
  const IperfRun r = ParseIperfJson(text, kIperfPeer, 2);
  EXPECT_EQ(r.bits_per_second, j.at(nlohmann::json::json_pointer("/end/sum_received/bits_per_second")).get<double>());
  EXPECT_EQ(r.bytes, j.at(nlohmann::json::json_pointer("/end/sum_received/bytes")).get<uint64_t>());
  // Hand-copied: received 1251868672 bytes at 9967394934.76623 bit/s; the server wrote 1259601920.
  EXPECT_EQ(r.bytes, 1251868672u);
  EXPECT_DOUBLE_EQ(r.bits_per_second, 9967394934.76623);
  EXPECT_EQ(r.sent_bytes, 1259601920u);
  // The server sent (sender.sender false, mean_rtt 0): no RTT from this run.
  EXPECT_TRUE(r.sender_rtt_ms.empty());
}

TEST(NetIperf, ErrorsAndMalformedOutputAreEnvironmentErrorsNamingThePeer) {
  auto expect_error = [](const std::string& text, const std::string& part, int streams = 2) {
    try {
      ParseIperfJson(text, kIperfPeer, streams);
      ADD_FAILURE() << "accepted " << text.substr(0, 200);
    } catch (const EnvironmentError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("127.0.0.1:5299"), std::string::npos) << what;
      EXPECT_NE(what.find(part), std::string::npos) << what;
    }
  };
  expect_error(R"({"error": "unable to connect to server"})", "unable to connect to server");
  expect_error(ReadText(test::Fixture("net/iperf3-error-refused.json")), "unable to connect to server: Connection refused");
  expect_error("iperf3: parameter error - only one test end condition (-t, -n, -k) may be specified", "not a JSON object");
  const std::string good = ReadText(test::Fixture("net/iperf3-forward-P2-t1.json"));
  expect_error(good.substr(0, good.size() / 2), "not a JSON object");
  expect_error(good, "asked for 4 streams", 4);
  nlohmann::json j = nlohmann::json::parse(good);
  nlohmann::json no_sum = j;
  no_sum["end"].erase("sum_received");
  expect_error(no_sum.dump(), "end.sum_received");
  nlohmann::json negative = j;
  negative["end"]["sum_received"]["bits_per_second"] = -1;
  expect_error(negative.dump(), "end.sum_received.bits_per_second");
  nlohmann::json text_bytes = j;
  text_bytes["end"]["sum_received"]["bytes"] = "924057600";
  expect_error(text_bytes.dump(), "end.sum_received.bytes");
  nlohmann::json one_connected = j;
  one_connected["start"]["connected"].erase(1);
  expect_error(one_connected.dump(), "connected 1");
  nlohmann::json no_streams = j;
  no_streams["end"].erase("streams");
  expect_error(no_streams.dump(), "end.streams");
}

TEST(NetIperf, AnInterruptedCheckpointIsWhatHadArrived) {
  const std::string text = ReadText(test::Fixture("net/iperf3-reverse-interrupted.json"));
  const nlohmann::json j = nlohmann::json::parse(text);
  // Not asked for: iperf3's interrupt is an error like any other.
  EXPECT_THROW(ParseIperfJson(text, kIperfPeer, 2), EnvironmentError);
  const IperfRun r = ParseIperfJson(text, kIperfPeer, 2, /*interrupted=*/true);
  EXPECT_TRUE(r.interrupted);
  EXPECT_EQ(r.bytes, j.at(nlohmann::json::json_pointer("/end/sum_received/bytes")).get<uint64_t>());
  EXPECT_EQ(r.bytes, 37224448u);  // hand-copied: 1.49 s at the 2 x 100 Mbit/s -b cap
  EXPECT_LT(r.bytes, j.at(nlohmann::json::json_pointer("/start/test_start/bytes")).get<uint64_t>());
}

TEST(NetIperf, ArgumentsAndTheRateSplitOverTheStreams) {
  const NetEndpoint peer{"::1", 5202};
  EXPECT_EQ(IperfArgs("/usr/bin/iperf3", peer, 4, 2, false, std::nullopt, std::nullopt),
            (std::vector<std::string>{"/usr/bin/iperf3", "-c", "::1", "-p", "5202", "-J", "-P", "4", "--connect-timeout",
                                      "5000", "-t", "2"}));
  // 200 Mbit/s over 4 streams: iperf3's -b is per stream, 50,000,000 bit/s each.
  EXPECT_EQ(IperfArgs("iperf3", peer, 4, 2, true, uint64_t{20000000}, 200.0),
            (std::vector<std::string>{"iperf3", "-c", "::1", "-p", "5202", "-J", "-P", "4", "--connect-timeout", "5000",
                                      "-n", "20000000", "-R", "-b", "50000000"}));
}

TEST(NetIperf, NoIperf3IsAnEnvironmentError) {
  NetClientRequest q;
  q.tool = "iperf3";
  q.iperf3 = "/nonexistent/iperf3";
  q.peer = kIperfPeer;
  try {
    MeasureLink(q);
    ADD_FAILURE() << "measured without iperf3";
  } catch (const EnvironmentError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/iperf3"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(FindExecutable("/nonexistent/iperf3"));
  EXPECT_EQ(FindExecutable("/bin/sh"), "/bin/sh");
}

TEST(NetIperf, EvidenceSaysWhereTheFiguresCameFrom) {
  NetLink l = Link("10.0.0.5:5201", 0.2, 0.9, 0.8);
  l.tool = "iperf3";
  l.pings = 0;
  auto r = JudgeLink(l, std::nullopt, std::nullopt);
  EXPECT_NE(r[0].evidence.find("mean_rtt"), std::string::npos) << r[0].evidence;
  EXPECT_NE(r[1].evidence.find("sum_received"), std::string::npos) << r[1].evidence;
  EXPECT_NE(r[1].evidence.find("-b per stream"), std::string::npos) << r[1].evidence;
  l.pings = 1;
  EXPECT_NE(JudgeLink(l, std::nullopt, std::nullopt)[0].evidence.find("one TCP connect"), std::string::npos);
}

// The child-process runner iperf3 runs under: a timeout kills, SIGINT interrupts, stdout is bounded.
TEST(RunProcess, TimeoutInterruptAndBoundedOutput) {
  ProcessOptions slow;
  slow.timeout_s = 0.3;
  const ProcessRun killed = RunProcess({"/bin/sleep", "10"}, slow);
  EXPECT_TRUE(killed.timed_out);
  EXPECT_EQ(killed.signal, SIGKILL);
  EXPECT_LT(killed.seconds, 5);
  ProcessOptions stop;
  stop.interrupt_s = 0.2;
  stop.timeout_s = 10;
  const ProcessRun interrupted = RunProcess({"/bin/sleep", "10"}, stop);
  EXPECT_TRUE(interrupted.interrupted);
  EXPECT_FALSE(interrupted.timed_out);
  EXPECT_EQ(interrupted.signal, SIGINT);
  ProcessOptions small;
  small.max_stdout = 1000;
  small.timeout_s = 0.3;
  const ProcessRun yes = RunProcess({"/usr/bin/yes"}, small);
  EXPECT_EQ(yes.out.size(), 1000u);
  EXPECT_TRUE(yes.out_truncated);
  const ProcessRun echo = RunProcess({"/bin/echo", "a b"}, ProcessOptions{});
  EXPECT_EQ(echo.out, "a b\n");
  EXPECT_EQ(echo.exit_code, 0);
  EXPECT_FALSE(RunProcess({"/nonexistent/x"}, ProcessOptions{}).start_error.empty());
}

}  // namespace
}  // namespace gpuplan
