// The serve API against a real server: the gpuplan binary started with `serve --port 0` on the
// loopback, talked to over HTTP with cpp-httplib's client. Each answer is held against the CLI's
// `--json` answer for the same request (the same binary run as a CLI) and against figures worked
// out by hand in the comments; the safety rules (body limit, media type, Host, token, static
// files, error objects) are checked on the wire; every route of the OpenAPI document is called
// and its answer validated against the document's schema.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <gtest/gtest.h>

#include "core/time.h"
#include <httplib.h>

#include <cctype>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "catalog/gpu_catalog.h"
#include "core/error.h"
#include "meter/sample.h"
#include "meter/store.h"
#include "http/http_server.h"
#include "serve/api.h"
#include "serve/serve_options.h"

namespace gpuplan {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string Fixture(const std::string& rel) { return std::string(GPUPLAN_TEST_FIXTURES) + "/" + rel; }
std::string DataDir() { return GPUPLAN_DATA_DIR; }
std::string Binary() { return GPUPLAN_BINARY; }

std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string Quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  }
  return out + "'";
}

// Runs the binary as a CLI in `dir`: its standard output and exit code.
struct CliRun {
  std::string out;
  int code = -1;
};
CliRun RunCli(const std::vector<std::string>& args, const std::string& dir, bool with_stderr = false) {
  std::string cmd = "cd " + Quote(dir) + " && env -u GPUPLAN_TOKEN " + Quote(Binary()) + " --data-dir " + Quote(DataDir());
  for (const auto& a : args) {
    cmd += " " + Quote(a);
  }
  cmd += with_stderr ? " 2>&1" : " 2>/dev/null";
  CliRun r;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) {
    return r;
  }
  char buf[65536];
  std::size_t n = 0;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) {
    r.out.append(buf, n);
  }
  const int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// `gpuplan serve --port 0 ...` as a child process; the port is read from its first line.
class ServerProcess {
 public:
  explicit ServerProcess(const std::vector<std::string>& extra) {
    std::vector<std::string> args = {Binary(), "--data-dir", DataDir(), "serve", "--port", "0"};
    args.insert(args.end(), extra.begin(), extra.end());
    int fds[2];
    if (pipe(fds) != 0) {
      return;
    }
    pid_ = fork();
    if (pid_ == 0) {
      dup2(fds[1], STDOUT_FILENO);
      close(fds[0]);
      close(fds[1]);
      std::vector<char*> argv;
      for (auto& a : args) {
        argv.push_back(a.data());
      }
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
    close(fds[1]);
    // "gpuplan serve: http://127.0.0.1:PORT/..." then nothing until it stops.
    std::string line;
    char c = 0;
    while (read(fds[0], &c, 1) == 1 && c != '\n') {
      line += c;
    }
    close(fds[0]);
    first_line_ = line;
    const auto colon = line.rfind(':', line.find('/', line.find("//") + 2));
    if (line.rfind("gpuplan serve: http://", 0) == 0 && colon != std::string::npos) {
      port_ = std::stoi(line.substr(colon + 1));
    }
  }
  ~ServerProcess() { Stop(); }
  // SIGTERM; the exit code (0: it stopped cleanly).
  int Stop() {
    if (pid_ <= 0) {
      return exit_code_;
    }
    kill(pid_, SIGTERM);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return exit_code_;
  }
  int port() const { return port_; }
  const std::string& first_line() const { return first_line_; }
  httplib::Client Client() const {
    httplib::Client c("127.0.0.1", port_);
    c.set_read_timeout(120, 0);
    return c;
  }

 private:
  pid_t pid_ = -1;
  int port_ = 0;
  int exit_code_ = -1;
  std::string first_line_;
};

json Body(const httplib::Result& r) {
  if (!r) {
    ADD_FAILURE() << "no answer: " << httplib::to_string(r.error());
    return nullptr;
  }
  return json::parse(r->body, nullptr, false);
}

// The shared server: a meter database and a reports folder made here, in a scratch folder.
class ServeApiTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new fs::path(fs::current_path() / ("serve_api_test." + std::to_string(getpid())));
    fs::remove_all(*dir_);
    fs::create_directories(*dir_ / "reports");
    MakeMeterDb((*dir_ / "meter.db").string());
    // A check report of an RTX 4090 from an nvidia-smi capture (no driver needed).
    const CliRun check = RunCli({"check", "--from-nvidia-smi", Fixture("nvidia-smi/rtx-4090-driver-535.xml"), "--expect",
                                 "RTX 4090", "--json", (*dir_ / "reports" / "rtx4090.json").string()},
                                dir_->string());
    ASSERT_TRUE(fs::exists(*dir_ / "reports" / "rtx4090.json")) << "check exit " << check.code;
    std::ofstream(*dir_ / "reports" / "not-a-report.json") << "{\"hello\": 1}";
    // A two-GPU H100 report with burn-in curves (tests/fixtures/check/README.md).
    fs::copy_file(Fixture("check/h100x2-burn-in.json"), *dir_ / "reports" / "h100x2-burn-in.json");
    // Not to be read through the API (issue 26): links out of the folder, a name that is not UTF-8.
    fs::create_symlink("/etc/passwd", *dir_ / "reports" / "passwd.json");
    fs::create_symlink(Fixture("check/h100x2-burn-in.json"), *dir_ / "reports" / "link-out.json");
    std::ofstream(*dir_ / "reports" / "n\xffm.json") << "{}";
    // A page folder with a link out of it (to /etc), which must not be followed.
    fs::create_directories(*dir_ / "web" / "assets");
    std::ofstream(*dir_ / "web" / "index.html") << "<!doctype html><title>fixture page</title>";
    std::ofstream(*dir_ / "web" / ".hidden") << "secret";
    fs::create_directory_symlink("/etc", *dir_ / "web" / "escape");
    server_ = new ServerProcess({"--meter-db", (*dir_ / "meter.db").string(), "--reports", (*dir_ / "reports").string(),
                                 "--web", (*dir_ / "web").string()});
    ASSERT_GT(server_->port(), 0) << "server said: " << server_->first_line();
  }
  static void TearDownTestSuite() {
    delete server_;
    fs::remove_all(*dir_);
    delete dir_;
  }

  // GPU 0 sampled once a minute: 2026-03-01 10:00-12:00 UTC busy at 50 % (120 samples), then
  // 12:00-13:00 idle at 0 % with no process (60 samples). By hand: 3 observed hours, 2 busy,
  // 1 idle.
  static void MakeMeterDb(const std::string& path) {
    const int64_t start = (CivilDay(2026, 3, 1).time_since_epoch().count() * 24 + 10) * kMillisecondsPerHour;
    std::vector<GpuSample> gpu;
    std::vector<ProcessSample> procs;
    for (int m = 0; m < 180; ++m) {
      GpuSample s;
      s.time = FromUnixMillis(start + m * kMillisecondsPerMinute);
      s.gpu = 0;
      s.uuid = "GPU-0";
      s.utilization_gpu = m < 120 ? 50 : 0;
      s.power = 300;
      gpu.push_back(s);
      if (m < 120) {
        ProcessSample p;
        p.time = s.time;
        p.gpu = 0;
        p.pid = 4242;
        p.user = "alice";
        p.command = "python train.py";
        p.gpu_memory = 1ull << 30;
        procs.push_back(p);
      }
    }
    StoreOptions o;
    o.sample_interval_seconds = 60;
    o.max_sample_gap_seconds = 90;
    MeterStore store = MeterStore::Open(path, o);
    store.Append(gpu);
    store.Append(procs);
    const int64_t at = start + 4 * kMillisecondsPerHour;
    while (store.Buffered() > 0) {
      store.Flush(FromUnixMillis(at));
    }
    store.RollUp(FromUnixMillis(at));
  }

  static httplib::Result Post(const std::string& path, const json& body) {
    return server_->Client().Post(path.c_str(), body.dump(), "application/json");
  }
  static httplib::Result Get(const std::string& path) { return server_->Client().Get(path.c_str()); }

  // A file in the scratch folder, for the CLI side of a comparison.
  static std::string Write(const std::string& name, const std::string& text) {
    std::ofstream(*dir_ / name) << text;
    return (*dir_ / name).string();
  }

  static fs::path* dir_;
  static ServerProcess* server_;
};
fs::path* ServeApiTest::dir_ = nullptr;
ServerProcess* ServeApiTest::server_ = nullptr;

TEST_F(ServeApiTest, HealthAndSecurityHeaders) {
  const auto r = Get("/health");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(Body(r)["status"], "ok");
  EXPECT_NE(r->get_header_value("Content-Security-Policy").find("default-src 'self'"), std::string::npos);
  EXPECT_EQ(r->get_header_value("X-Content-Type-Options"), "nosniff");
  EXPECT_EQ(r->get_header_value("X-Frame-Options"), "DENY");
  EXPECT_FALSE(r->has_header("Access-Control-Allow-Origin"));
}

// The model presets name their files as the data folder does, not by the server's absolute path.
TEST_F(ServeApiTest, ModelsNameNoServerPath) {
  const json models = Body(Get("/api/models"));
  ASSERT_TRUE(models.is_array());
  ASSERT_FALSE(models.empty());
  bool qwen = false;
  for (const auto& m : models) {
    const std::string path = m["path"].get<std::string>();
    EXPECT_EQ(path.rfind("models/", 0), 0u) << path;
    EXPECT_EQ(path.find('/', 7), std::string::npos) << path;
    qwen = qwen || (m["name"] == "Qwen2.5-7B" && path == "models/Qwen2.5-7B.json");
  }
  EXPECT_TRUE(qwen);
}

TEST_F(ServeApiTest, FitEqualsTheCli) {
  // The example: a LoRA of Qwen2.5-7B at 2048 tokens, on one A100 80GB.
  const json req = {{"model", "Qwen2.5-7B"}, {"task", "lora"}, {"seq", 2048}, {"gpu", "A100 80GB SXM"}};
  const auto r = Post("/api/fit", req);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
  const CliRun cli =
      RunCli({"fit", "--model", "Qwen2.5-7B", "--task", "lora", "--seq", "2048", "--gpu", "A100 80GB SXM", "--json"},
             dir_->string());
  EXPECT_EQ(cli.code, 0);
  EXPECT_EQ(Body(r), json::parse(cli.out));
  // Qwen2.5-7B (hidden 3584, 28 layers, FFN 18944, vocabulary 152064, 28 query and 4 KV heads of
  // 128, q/k/v biases, untied head): per layer q 3584x3584+3584 = 12,848,640, k and v
  // 3584x512+512 = 1,835,520 each, o 12,845,056, MLP 3x3584x18944 = 203,685,888, two norms
  // 7,168: 233,057,792; x28 = 6,525,618,176; embedding and head 2x152064x3584 = 1,089,994,752;
  // final norm 3,584. Total 7,615,616,512.
  EXPECT_EQ(Body(r)["model"]["params_total"], 7615616512LL);
}

TEST_F(ServeApiTest, PlanEqualsTheCliAndNamesNoServerFile) {
  // One GPU served all March: the monthly term (21,900 CNY) beats 744 h x 50 on demand (issue 30
  // req 7: {"workload": TEXT, "offers": [TEXT]}; the same JSON as the CLI).
  const std::string workload = "months: 2027-03\nserving:\n  - {id: chat, model: Qwen2.5-7B, qps: 0.1}\n";
  const std::string offers =
      "currency: CNY\noffers:\n  - {id: m, provider: p, gpu: A100 80GB SXM, mode: monthly, price: 21900}\n"
      "  - {id: od, provider: p, gpu: A100 80GB SXM, mode: on_demand, price: 50}\n";
  const auto r = Post("/api/plan", {{"workload", workload}, {"offers", {offers}}});
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  const json j = Body(r);
  EXPECT_NEAR(j["total"].get<double>(), 21900, 0.005);
  ASSERT_EQ(j["months"].size(), 1u);
  EXPECT_EQ(j["months"][0]["month"], "2027-03");
  const std::filesystem::path w = *dir_ / "plan-work.yaml", o = *dir_ / "plan-offers.yaml";
  std::ofstream(w) << workload;
  std::ofstream(o) << offers;
  const CliRun cli = RunCli({"plan", w.string(), "--offers", o.string(), "--json"}, dir_->string());
  ASSERT_EQ(cli.code, 0) << cli.out;
  json from_cli = json::parse(cli.out);
  EXPECT_EQ(from_cli["months"], j["months"]);
  EXPECT_EQ(from_cli["total"], j["total"]);
  // The server writes no file and reads none a request names.
  const auto out = Post("/api/plan", {{"workload", workload}, {"offers", {offers}}, {"usage_out", "/tmp/x.csv"}});
  ASSERT_TRUE(out);
  EXPECT_EQ(out->status, 400) << out->body;
  const std::string by_path = "months: 2027-03\nserving:\n  - {id: chat, model: /etc/passwd, qps: 0.1}\n";
  const auto bad = Post("/api/plan", {{"workload", by_path}, {"offers", {offers}}});
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400) << bad->body;
  EXPECT_EQ(Body(bad)["error"]["line"], 3);
}

TEST_F(ServeApiTest, InferenceWeightsByHand) {
  const json req = {{"model", "Qwen2.5-7B"}, {"task", "infer"}, {"gpu", "A100 80GB SXM"}};
  const json j = Body(Post("/api/fit", req));
  // bf16 weights: 2 bytes x 7,615,616,512 parameters = 15,231,233,024 bytes on one GPU.
  EXPECT_EQ(j["memory_per_gpu"]["weights"], 15231233024LL);
  EXPECT_EQ(j["fits"], true);
}

TEST_F(ServeApiTest, PastedConfigEqualsTheCliWithTheFile) {
  const std::string config = ReadText(Fixture("configs/llama-2-7b.json"));
  const json as_text = {{"config", config}, {"model", "llama-2-7b"}, {"task", "infer"}, {"gpu", "A100 80GB SXM"}};
  const auto r = Post("/api/fit", as_text);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
  const CliRun cli = RunCli({"fit", "--model", Fixture("configs/llama-2-7b.json"), "--task", "infer", "--gpu",
                             "A100 80GB SXM", "--json"},
                            dir_->string());
  EXPECT_EQ(Body(r), json::parse(cli.out));
  // Llama-2-7B: per layer 4x4096^2 (attention) + 3x4096x11008 (MLP) + 2x4096 (norms) =
  // 67,108,864 + 135,266,304 + 8,192 = 202,383,360; x32 = 6,476,267,520; embedding and head
  // 2x32000x4096 = 262,144,000; final norm 4,096: 6,738,415,616.
  EXPECT_EQ(Body(r)["model"]["params_total"], 6738415616LL);
  // The config as a JSON object answers the same.
  json as_object = as_text;
  as_object["config"] = json::parse(config);
  EXPECT_EQ(Body(Post("/api/fit", as_object)), Body(r));
}

TEST_F(ServeApiTest, BadInputIsA400NamingTheKeyWithTheCliMessage) {
  const auto r = Post("/api/fit", {{"model", "Qwen2.5-7B"}, {"task", "lorra"}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  const json e = Body(r)["error"];
  EXPECT_EQ(e["code"], 400);
  EXPECT_EQ(e["field"], "task");
  const CliRun cli = RunCli({"fit", "--model", "Qwen2.5-7B", "--task", "lorra", "--json"}, dir_->string());
  EXPECT_EQ(cli.code, 2);
  const json ce = json::parse(cli.out)["error"];
  EXPECT_EQ(ce["field"], "--task");
  EXPECT_EQ(e["message"], ce["message"]);

  const json unknown = Body(Post("/api/fit", {{"model", "Qwen2.5-7B"}, {"sequence", 4096}}))["error"];
  EXPECT_EQ(unknown["field"], "sequence");
  EXPECT_NE(unknown["message"].get<std::string>().find("seq"), std::string::npos);

  const json wrong_type = Body(Post("/api/fit", {{"model", "Qwen2.5-7B"}, {"seq", "long"}}))["error"];
  EXPECT_EQ(wrong_type["field"], "seq");

  // A name given twice: nlohmann would keep the last (gpus 1); refused instead, naming it, at the
  // second one's line (RFC 8259 §4; docs/architecture.md "Input limits").
  const auto twice = server_->Client().Post(
      "/api/fit", "{\"model\": \"Qwen2.5-7B\", \"task\": \"infer\",\n \"gpus\": 8,\n \"gpus\": 1}", "application/json");
  ASSERT_TRUE(twice);
  EXPECT_EQ(twice->status, 400);
  const json te = Body(twice)["error"];
  EXPECT_EQ(te["field"], "gpus");
  EXPECT_EQ(te["line"], 3);
  EXPECT_NE(te["message"].get<std::string>().find("given twice"), std::string::npos) << te;
}

TEST_F(ServeApiTest, AModelIsAPresetNeverAServerPath) {
  for (const std::string& path :
       std::vector<std::string>{"/etc/passwd", DataDir() + "/models/Qwen2.5-7B.json", DataDir() + "/models"}) {
    const auto r = Post("/api/fit", {{"model", path}, {"task", "infer"}});
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 400) << path;
    const json e = Body(r)["error"];
    EXPECT_EQ(e["field"], "model");
    EXPECT_EQ(r->body.find("root:"), std::string::npos);
  }
  // Offers and usage are texts: a path is read as (bad) YAML, not opened.
  const auto r = Post("/api/cost/compare", {{"offers", DataDir() + "/offers/nanjing-a100.yaml"}, {"hours_per_month", 100}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  EXPECT_EQ(r->body.find("nanjing-idc-a"), std::string::npos);
}

TEST_F(ServeApiTest, CostJobsEqualTheCli) {
  const std::string offers = ReadText(DataDir() + "/offers/nanjing-a100.yaml");
  // The API names the texts "offers" and "usage": the CLI runs in a folder where those are the
  // files' names, so both answers name the same files.
  Write("offers", offers);
  // Two GPUs for the first 10 hours of 2027-03-01, one for the next 5: 2x10 + 1x5 = 25 GPU-hours.
  std::string csv = "timestamp,gpus\n";
  for (int h = 0; h < 15; ++h) {
    csv += "2027-03-01T" + std::string(h < 10 ? "0" : "") + std::to_string(h) + ":00," + (h < 10 ? "2" : "1") + "\n";
  }
  Write("usage", csv);

  const json be = Body(Post("/api/cost/breakeven", {{"offers", offers}, {"month", "2027-03"}}));
  EXPECT_EQ(be, json::parse(RunCli({"cost", "breakeven", "--offers", "offers", "--month", "2027-03", "--json"},
                                   dir_->string()).out));
  EXPECT_EQ(be["month_hours"], 744);  // March: 31 x 24

  const json cmp = Body(Post("/api/cost/compare", {{"offers", offers}, {"usage", csv}}));
  EXPECT_EQ(cmp, json::parse(RunCli({"cost", "compare", "--offers", "offers", "--usage", "usage", "--json"},
                                    dir_->string()).out));
  EXPECT_DOUBLE_EQ(cmp["usage"]["gpu_hours"].get<double>(), 25.0);

  const json opt = Body(Post("/api/cost/optimize", {{"offers", offers}, {"usage", csv}}));
  EXPECT_EQ(opt, json::parse(RunCli({"cost", "optimize", "--offers", "offers", "--usage", "usage", "--json"},
                                    dir_->string()).out));
  EXPECT_EQ(opt["usage"]["peak_gpus"], 2.0);

  const json tco = Body(Post("/api/cost/tco", {{"offers", offers}, {"hours_per_month", 300}, {"month", "2027-03"}}));
  EXPECT_EQ(tco, json::parse(RunCli({"cost", "tco", "--offers", "offers", "--hours-per-month", "300", "--month",
                                     "2027-03", "--json"},
                                    dir_->string()).out));

  const auto unknown = Post("/api/cost/bargain", {{"offers", offers}});
  ASSERT_TRUE(unknown);
  EXPECT_EQ(unknown->status, 404);
}

TEST_F(ServeApiTest, AnOffersErrorNamesTheTextAndItsLine) {
  const auto r = Post("/api/cost/compare", {{"offers", "currency: CNY\noffers:\n  - id: x\n    gpu: A100 80GB SXM\n"
                                                       "    mode: monthlyy\n    price: 1\n"},
                                            {"hours_per_month", 100}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  const json e = Body(r)["error"];
  EXPECT_EQ(e["file"], "offers");
  EXPECT_EQ(e["line"], 5);
}

TEST_F(ServeApiTest, MeterReportAndExport) {
  const auto r = Get("/api/meter/report?from=2026-03-01&to=2026-03-02");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  const json j = Body(r);
  // By hand (MakeMeterDb): 3 observed hours, 2 busy, 1 idle.
  EXPECT_DOUBLE_EQ(j["total"]["observed_hours"].get<double>(), 3.0);
  EXPECT_DOUBLE_EQ(j["total"]["busy_hours"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(j["total"]["idle_hours"].get<double>(), 1.0);
  // What the store holds whatever the range (the page opens on it): samples 10:00 to 12:59.
  EXPECT_EQ(j["store"]["from"], "2026-03-01T10:00+00:00");
  EXPECT_EQ(j["store"]["to"], "2026-03-01T13:00+00:00");
  EXPECT_EQ(Body(Get("/api/meter/report?from=2026-04-01&to=2026-04-02"))["store"], j["store"]);
  const CliRun cli = RunCli({"meter", "report", "--db", (*dir_ / "meter.db").string(), "--from", "2026-03-01", "--to",
                             "2026-03-02", "--json"},
                            dir_->string());
  EXPECT_EQ(j, json::parse(cli.out));

  const json by_user = Body(Get("/api/meter/report?from=2026-03-01&to=2026-03-02&by=user"));
  bool alice = false;
  for (const auto& g : by_user["groups"]) {
    if (g["key"] == "alice") {
      alice = true;
      EXPECT_DOUBLE_EQ(g["busy_hours"].get<double>(), 2.0);
    }
  }
  EXPECT_TRUE(alice) << by_user.dump();

  const auto db = Get("/api/meter/report?db=/etc/passwd");
  ASSERT_TRUE(db);
  EXPECT_EQ(db->status, 400);
  EXPECT_EQ(Body(db)["error"]["field"], "db");
  const auto bad = Get("/api/meter/report?by=team");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
  EXPECT_EQ(Body(bad)["error"]["field"], "by");

  const auto csv = Get("/api/meter/export?from=2026-03-01&to=2026-03-02");
  ASSERT_TRUE(csv);
  EXPECT_EQ(csv->status, 200);
  EXPECT_EQ(csv->body, RunCli({"meter", "export", "--db", (*dir_ / "meter.db").string(), "--from", "2026-03-01", "--to",
                               "2026-03-02"},
                              dir_->string()).out);
  EXPECT_EQ(csv->body.rfind("timestamp,gpus\n", 0), 0u);
}

// Issue 26 req. 8: a file of the reports folder that is not what it seems is skipped and named.
TEST_F(ServeApiTest, ReportsFolderSkipsLinksOutAndNonUtf8Names) {
  const json list = Body(Get("/api/check/reports"));
  std::map<std::string, std::string> skipped;
  for (const auto& s : list["skipped"]) {
    skipped[s["name"].get<std::string>()] = s["why"].get<std::string>();
  }
  EXPECT_EQ(skipped["passwd.json"], "a link that leads out of the reports folder");
  EXPECT_EQ(skipped["link-out.json"], "a link that leads out of the reports folder");
  EXPECT_EQ(skipped["n\xef\xbf\xbdm.json"], "its name is not UTF-8");  // written with U+FFFD
  for (const auto& r : list["reports"]) {
    EXPECT_NE(r["name"], "passwd.json");
  }
  const auto r = Get("/api/check/reports/passwd.json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 404);
  EXPECT_EQ(r->body.find("root"), std::string::npos);  // nothing of /etc/passwd
}

// Issue 26 req. 8: the Host must name this server exactly (DNS rebinding reaches a loopback
// server under a name the attacker controls), and every text is UTF-8.
TEST_F(ServeApiTest, HostIsMatchedExactlyAndTextMustBeUtf8) {
  const std::string port = std::to_string(server_->port());
  for (const std::string& host : std::vector<std::string>{"127.0.0.1.evil.example", "127.0.0.1.evil.example:" + port, "localhost.evil.example",
                                 "evil.example", "127.1", "127.0.0.256", "127.0.0.1:80x", "[::1].evil", "",
                                 "0.0.0.0:" + port}) {
    const auto r = server_->Client().Get("/api/gpus", httplib::Headers{{"Host", host}});
    ASSERT_TRUE(r) << host;
    EXPECT_EQ(r->status, 403) << "Host: " << host;
  }
  for (const std::string& host :
       std::vector<std::string>{"127.0.0.1:" + port, "localhost", "LOCALHOST:" + port, "[::1]:" + port, "127.9.8.7"}) {
    const auto r = server_->Client().Get("/api/gpus", httplib::Headers{{"Host", host}});
    ASSERT_TRUE(r) << host;
    EXPECT_EQ(r->status, 200) << "Host: " << host;
  }
  // --allow-host names one more, exactly.
  ServerProcess named({"--allow-host", "gpu-box.lan"});
  ASSERT_GT(named.port(), 0) << named.first_line();
  EXPECT_EQ(named.Client().Get("/api/gpus", httplib::Headers{{"Host", "gpu-box.lan:8080"}})->status, 200);
  EXPECT_EQ(named.Client().Get("/api/gpus", httplib::Headers{{"Host", "GPU-BOX.LAN"}})->status, 200);
  EXPECT_EQ(named.Client().Get("/api/gpus", httplib::Headers{{"Host", "evil.gpu-box.lan"}})->status, 403);
  EXPECT_EQ(named.Client().Get("/api/gpus", httplib::Headers{{"Host", "gpu-box.lan.evil.example"}})->status, 403);
  // A body that is not UTF-8 is a 400 naming the body, not a 500.
  const auto bad = server_->Client().Post("/api/fit", std::string("{\"model\": \"\xff\"}"), "application/json");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
  EXPECT_EQ(Body(bad)["error"]["field"], "body");
  const auto query = Get("/api/meter/report?from=%FF");
  ASSERT_TRUE(query);
  EXPECT_EQ(query->status, 400);
  EXPECT_EQ(Body(query)["error"]["field"], "query");
}

// Issue 26 req. 8: every request has a work budget. Sizes beyond what a search or a report can
// hold are refused with 400 naming the field; a computation past --max-request-seconds ends with
// a 400 naming that option; SIGTERM ends a server whose thread is in a long search.
TEST_F(ServeApiTest, RequestsHaveAWorkBudget) {
  const std::string offers = ReadText(DataDir() + "/offers/nanjing-a100.yaml");
  const auto field_of = [](const httplib::Result& r) {
    EXPECT_TRUE(r);
    EXPECT_EQ(r ? r->status : 0, 400) << (r ? r->body : "");
    return r ? Body(r)["error"]["field"].get<std::string>() : std::string();
  };
  EXPECT_EQ(field_of(Post("/api/fit", {{"model", "Llama-3.1-8B"}, {"task", "lora"}, {"max_gpus", 1000000}})), "max_gpus");
  EXPECT_EQ(field_of(Post("/api/cost/compare", {{"offers", offers}, {"hours_per_month", 100}, {"gpus", 1e9}})), "gpus");
  EXPECT_EQ(field_of(Get("/api/meter/report?from=2000-01-01")), "from");  // 26 years: over 1,100 days
  // A search of every layout up to 4,096 GPUs takes seconds; with a budget of 1 s it ends there.
  ServerProcess quick({"--max-request-seconds", "1"});
  ASSERT_GT(quick.port(), 0) << quick.first_line();
  const auto started = std::chrono::steady_clock::now();
  const auto r = quick.Client().Post("/api/fit",
                                     json{{"model", "Llama-3.1-70B"}, {"task", "full"}, {"max_gpus", 4096}}.dump(),
                                     "application/json");
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  EXPECT_EQ(field_of(r), "max_request_seconds");
  EXPECT_LT(took, 10.0);  // the budget, not the search's own length (about 30 s here)
  // SIGTERM while a thread searches: the search ends (503) and the server is gone (it waited for
  // the search before, 3.5 minutes).
  ServerProcess busy({"--max-request-seconds", "600"});
  ASSERT_GT(busy.port(), 0) << busy.first_line();
  std::thread client([&] {
    const auto answer = busy.Client().Post(
        "/api/fit", json{{"model", "Llama-3.1-70B"}, {"task", "full"}, {"max_gpus", 4096}}.dump(), "application/json");
    if (answer) {
      EXPECT_EQ(answer->status, 503) << answer->body;
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(800));
  const auto stop_started = std::chrono::steady_clock::now();
  EXPECT_EQ(busy.Stop(), 0);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - stop_started).count(), 5.0);
  client.join();
}

// A bad request is answered with its own error at once, never queued behind the solver (GLPK:
// one solve at a time, api.cc): the cost and fit bodies are checked before the lock is waited
// for. A priced fit search holds the lock to its budget (3 s here): Mixtral-8x22B on every card
// of the catalog up to 4,096 GPUs, about 8 s of search alone. Meanwhile a cost body and a priced
// fit body with a value out of range get their validation errors, not the budget's, and long
// before the lock is free; a good cost request waits for the lock (which shows it was held).
TEST(ServeSolverLock, ABadRequestGetsItsErrorWhileTheLockIsHeld) {
  const std::string offers = ReadText(DataDir() + "/offers/nanjing-a100.yaml");
  std::string every_card = "currency: CNY\noffers:\n";
  int n = 0;
  const GpuCatalog catalog = GpuCatalog::Load(DataDir() + "/gpus.yaml");
  for (const Gpu& g : catalog.gpus()) {
    every_card += "  - {id: o" + std::to_string(n++) + ", provider: p, gpu: " + g.name +
                  ", gpus_per_instance: 1, mode: on_demand, price: 50}\n";
  }
  ServerProcess server({"--max-request-seconds", "3"});
  ASSERT_GT(server.port(), 0) << server.first_line();
  const auto seconds_since = [](std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
  };
  json holder_error;
  std::thread holder([&] {
    const auto r = server.Client().Post(
        "/api/fit",
        json{{"model", "Mixtral-8x22B-v0.1"}, {"task", "full"}, {"max_gpus", 4096}, {"offers", every_card}}.dump(),
        "application/json");
    holder_error = r ? json::parse(r->body, nullptr, false)["error"] : json();
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // the holder has the lock

  const auto started = std::chrono::steady_clock::now();
  const auto cost = server.Client().Post(
      "/api/cost/compare", json{{"offers", offers}, {"hours_per_month", 100}, {"extrapolate", "week"}}.dump(),
      "application/json");
  const auto fit = server.Client().Post(
      "/api/fit", json{{"model", "Qwen2.5-7B"}, {"tp", 0}, {"offers", offers}}.dump(), "application/json");
  const double took = seconds_since(started);
  const auto good_started = std::chrono::steady_clock::now();
  const auto good =
      server.Client().Post("/api/cost/compare", json{{"offers", offers}, {"hours_per_month", 100}}.dump(), "application/json");
  const double good_took = seconds_since(good_started);
  holder.join();
  ASSERT_TRUE(cost);
  ASSERT_TRUE(fit);
  EXPECT_EQ(cost->status, 400);
  EXPECT_EQ(Body(cost)["error"]["field"], "extrapolate");
  EXPECT_EQ(Body(cost)["error"]["message"], "expected month or year, got 'week'");
  EXPECT_EQ(fit->status, 400);
  EXPECT_EQ(Body(fit)["error"]["field"], "tp");
  EXPECT_EQ(Body(fit)["error"]["message"], "must be a positive number, got 0");
  EXPECT_LT(took, 1.5);  // not the 2.5 s left of the holder's budget
  EXPECT_GT(good_took, 1.0) << "the lock was not held";
  EXPECT_EQ(holder_error["field"], "max_request_seconds");
  EXPECT_TRUE(good);
}

// Issue 26 req. 4: the API's prose in the page's language, by the CLI's catalogue: ?lang=zh or
// Accept-Language: zh; identifiers (kind, status) stay as they are; English by default.
TEST_F(ServeApiTest, AnswersSpeakTheRequestsLanguage) {
  const json en = Body(Get("/api/meter/report?from=2026-03-01&to=2026-03-02"));
  const json zh = Body(Get("/api/meter/report?from=2026-03-01&to=2026-03-02&lang=zh"));
  ASSERT_FALSE(en["idle"].empty());
  const std::string line_en = en["idle"][0]["line"];
  const std::string line_zh = zh["idle"][0]["line"];
  EXPECT_NE(line_en.find("allocated with no process"), std::string::npos) << line_en;  // unpriced
  EXPECT_NE(line_zh.find("已占用但无进程"), std::string::npos) << line_zh;
  EXPECT_EQ(zh["by"], "gpu");  // an identifier, not translated
  const auto header = server_->Client().Get("/api/meter/report?from=2026-03-01&to=2026-03-02",
                                            httplib::Headers{{"Accept-Language", "zh-CN,zh;q=0.9,en;q=0.8"}});
  EXPECT_EQ(Body(header)["idle"][0]["line"], line_zh);
  // An error's message too, its field unchanged.
  const auto bad = server_->Client().Post("/api/fit", httplib::Headers{{"Accept-Language", "zh"}},
                                          json{{"model", "Qwen2.5-8B"}}.dump(), "application/json");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
  const json e = Body(bad)["error"];
  EXPECT_EQ(e["field"], "model");
  EXPECT_NE(e["message"].get<std::string>().find("未知的模型"), std::string::npos) << e["message"];
}

TEST_F(ServeApiTest, CheckReports) {
  const json list = Body(Get("/api/check/reports"));
  ASSERT_EQ(list["reports"].size(), 3u);
  EXPECT_EQ(list["reports"][0]["name"], "h100x2-burn-in.json");
  EXPECT_TRUE(list["reports"][0]["error"].is_null());
  EXPECT_EQ(list["reports"][1]["name"], "not-a-report.json");
  EXPECT_TRUE(list["reports"][1]["error"].is_string());
  EXPECT_EQ(list["reports"][2]["name"], "rtx4090.json");
  EXPECT_TRUE(list["reports"][2]["error"].is_null());
  const json one = Body(Get("/api/check/reports/rtx4090.json"));
  EXPECT_EQ(one["expect"], "RTX 4090");
  EXPECT_EQ(one["verdict"], list["reports"][2]["verdict"]);
  // The curves come through as the file has them.
  const json burn = Body(Get("/api/check/reports/h100x2-burn-in.json"));
  EXPECT_EQ(burn["curves"], json::parse(ReadText(Fixture("check/h100x2-burn-in.json")))["curves"]);
  for (const std::string bad : {"/api/check/reports/..%2Fmeter.db", "/api/check/reports/missing.json",
                                "/api/check/reports/%2E%2E"}) {
    const auto r = Get(bad);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 404) << bad;
  }
}

TEST_F(ServeApiTest, CheckCompareEqualsTheCli) {
  const auto r = Post("/api/check/compare", {{"reports", {"rtx4090.json", "h100x2-burn-in.json"}}});
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  // The CLI in the reports folder, naming the files as the body names them.
  const CliRun cli = RunCli({"check", "compare", "rtx4090.json", "h100x2-burn-in.json", "--json", "-"},
                            (*dir_ / "reports").string());
  EXPECT_EQ(cli.code, 0);
  EXPECT_EQ(Body(r), json::parse(cli.out));
  // The two cards, as the files name them.
  EXPECT_EQ(Body(r)["machines"][0]["card"], "RTX 4090");
  EXPECT_EQ(Body(r)["machines"][1]["gpus"], 2);
  for (const auto& [body, field] : std::vector<std::pair<json, std::string>>{
           {{{"reports", {"rtx4090.json"}}}, "reports"},
           {{{"reports", {"rtx4090.json", "missing.json"}}}, "reports"},
           {{{"reports", {"rtx4090.json", "../meter.db"}}}, "reports"},
           {{{"reports", "rtx4090.json"}}, "reports"},
           {{{"reports", {"rtx4090.json", "h100x2-burn-in.json"}}, {"offers", "/etc/passwd"}}, "offers"}}) {
    const auto bad = Post("/api/check/compare", body);
    ASSERT_TRUE(bad);
    EXPECT_EQ(bad->status, 400) << body.dump();
    EXPECT_EQ(Body(bad)["error"]["field"], field) << body.dump() << ": " << bad->body;
  }
}

TEST_F(ServeApiTest, MeterTimelineSlotsAreTheCliReportOfEachSlot) {
  const auto r = Get("/api/meter/timeline?from=2026-03-01&to=2026-03-02");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  const json j = Body(r);
  EXPECT_EQ(j["step"], "hour");
  ASSERT_EQ(j["slots"].size(), 24u);
  // By hand (MakeMeterDb): busy 10:00-12:00, idle 12:00-13:00, nothing else.
  double busy = 0;
  double idle = 0;
  for (const auto& slot : j["slots"]) {
    busy += slot["total"]["busy_hours"].get<double>();
    idle += slot["total"]["idle_hours"].get<double>();
  }
  EXPECT_DOUBLE_EQ(busy, 2.0);
  EXPECT_DOUBLE_EQ(idle, 1.0);
  EXPECT_DOUBLE_EQ(j["slots"][12]["total"]["idle_hours"].get<double>(), 1.0);
  EXPECT_EQ(j["slots"][10]["from"], "2026-03-01T10:00+00:00");
  const CliRun cli = RunCli({"meter", "report", "--db", (*dir_ / "meter.db").string(), "--from", "2026-03-01T10:00+00:00",
                             "--to", "2026-03-01T11:00+00:00", "--json"},
                            dir_->string());
  EXPECT_EQ(j["slots"][10]["total"], json::parse(cli.out)["total"]);
  // The whole answer is `gpuplan meter timeline --json`.
  const CliRun timeline = RunCli({"meter", "timeline", "--db", (*dir_ / "meter.db").string(), "--from", "2026-03-01",
                                  "--to", "2026-03-02", "--json"},
                                 dir_->string());
  EXPECT_EQ(timeline.code, 0);
  EXPECT_EQ(j, json::parse(timeline.out));

  const json days = Body(Get("/api/meter/timeline?from=2026-03-01&to=2026-03-03&step=day"));
  ASSERT_EQ(days["slots"].size(), 2u);
  EXPECT_DOUBLE_EQ(days["slots"][0]["total"]["observed_hours"].get<double>(), 3.0);
  for (const auto& [query, field] : std::vector<std::pair<std::string, std::string>>{
           {"step=week", "step"}, {"by=user", "by"}, {"db=/etc/passwd", "db"}, {"from=2026-01&to=2026-03", "step"}}) {
    const auto bad = Get("/api/meter/timeline?" + query);
    ASSERT_TRUE(bad);
    EXPECT_EQ(bad->status, 400) << query;
    EXPECT_EQ(Body(bad)["error"]["field"], field) << query << ": " << bad->body;
  }
}

TEST_F(ServeApiTest, MeterAlertsEqualTheCli) {
  const auto r = Get("/api/meter/alerts?from=2026-03-01&to=2026-03-02");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  const json j = Body(r);
  // By hand (MakeMeterDb, default rules: idle 30 min, repeat 60): GPU 0 has no process from
  // 12:00, its last sample is 12:59: one idle alert at 12:30 (30 min), none at 13:30. Busy at
  // 50 % before: no low-utilisation alert. No offers on this server: no money.
  ASSERT_EQ(j["alerts"].size(), 1u) << j.dump();
  EXPECT_EQ(j["alerts"][0]["kind"], "idle_no_process");
  EXPECT_EQ(j["alerts"][0]["gpu"], 0);
  EXPECT_EQ(j["alerts"][0]["at"], "2026-03-01T12:30+00:00");
  EXPECT_EQ(j["alerts"][0]["since"], "2026-03-01T12:00+00:00");
  EXPECT_DOUBLE_EQ(j["alerts"][0]["minutes"].get<double>(), 30.0);
  EXPECT_TRUE(j["alerts"][0]["money"].is_null());
  EXPECT_EQ(j["counts"]["idle_no_process"], 1);
  const CliRun cli = RunCli({"meter", "alerts", "--db", (*dir_ / "meter.db").string(), "--from", "2026-03-01", "--to",
                             "2026-03-02", "--json"},
                            dir_->string());
  EXPECT_EQ(cli.code, 0);
  EXPECT_EQ(j, json::parse(cli.out));
  for (const auto& [query, field] : std::vector<std::pair<std::string, std::string>>{
           {"alerts=/etc/passwd", "alerts"}, {"db=/etc/passwd", "db"}, {"from=March", "from"}, {"by=user", "by"}}) {
    const auto bad = Get("/api/meter/alerts?" + query);
    ASSERT_TRUE(bad);
    EXPECT_EQ(bad->status, 400) << query;
    EXPECT_EQ(Body(bad)["error"]["field"], field) << query << ": " << bad->body;
  }
}

TEST_F(ServeApiTest, FrameworksEqualTheCli) {
  const auto r = Get("/api/frameworks");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  const json j = Body(r);
  EXPECT_EQ(j, json::parse(RunCli({"frameworks", "--json"}, dir_->string()).out));
  // data/frameworks.yaml lists 16 frameworks, 11 for training (megatron-bridge the newest) and 5
  // inference servers, each
  // default version once; vLLM 0.21's KV rule takes 0.92 of the card by default (cache.py L80),
  // in 16-token blocks.
  int defaults = 0;
  int inference = 0;
  for (const auto& f : j["frameworks"]) {
    if (!f["default"].get<bool>()) {
      continue;
    }
    ++defaults;
    inference += f["kind"] == "inference" ? 1 : 0;
    if (f["name"] == "vllm") {
      EXPECT_EQ(f["id"], "vllm@0.21");
      EXPECT_EQ(f["kv_rule"], "vllm");
      EXPECT_DOUBLE_EQ(f["kv_fraction"].get<double>(), 0.92);
      EXPECT_EQ(f["kv_block_tokens"], 16);
    }
    if (f["name"] == "llama.cpp") {
      EXPECT_EQ(f["gguf"], true);
    }
  }
  EXPECT_EQ(defaults, 16);
  EXPECT_EQ(inference, 5);
  // Q4_0: an fp16 scale and 16 bytes per 32 weights, 18 x 8 / 32 = 4.5 bits.
  bool q4_0 = false;
  for (const auto& g : j["gguf_types"]) {
    if (g["type"] == "Q4_0") {
      q4_0 = true;
      EXPECT_DOUBLE_EQ(g["bits"].get<double>(), 4.5);
    }
  }
  EXPECT_TRUE(q4_0);
}

TEST_F(ServeApiTest, Safety) {
  // A body over the 1 MiB default limit on a route without an upload limit... every POST route
  // takes uploads (16 MiB), so: 17 MiB.
  const std::string big(17 * 1024 * 1024, ' ');
  const auto r413 = server_->Client().Post("/api/fit", big, "application/json");
  ASSERT_TRUE(r413);
  EXPECT_EQ(r413->status, 413);
  EXPECT_EQ(Body(r413)["error"]["code"], 413);
  // Not JSON: a cross-site form could send text/plain without a preflight.
  const auto r415 = server_->Client().Post("/api/fit", "{\"model\": \"Qwen2.5-7B\"}", "text/plain");
  ASSERT_TRUE(r415);
  EXPECT_EQ(r415->status, 415);
  // A Host that is not the loopback (DNS rebinding) is refused when there is no token.
  httplib::Headers evil = {{"Host", "evil.example:8080"}};
  const auto r403 = server_->Client().Get("/api/gpus", evil);
  ASSERT_TRUE(r403);
  EXPECT_EQ(r403->status, 403);
  // Not JSON at all.
  const auto bad_json = server_->Client().Post("/api/fit", "{model: ", "application/json");
  ASSERT_TRUE(bad_json);
  EXPECT_EQ(bad_json->status, 400);
  // CORS: a preflight gets no allow-origin.
  httplib::Headers origin = {{"Origin", "https://evil.example"}, {"Access-Control-Request-Method", "POST"}};
  const auto pre = server_->Client().Options("/api/fit", origin);
  ASSERT_TRUE(pre);
  EXPECT_FALSE(pre->has_header("Access-Control-Allow-Origin"));
  EXPECT_GE(pre->status, 400);
  // Unknown API path: a JSON 404.
  const auto r404 = Get("/api/nothing");
  ASSERT_TRUE(r404);
  EXPECT_EQ(r404->status, 404);
  EXPECT_EQ(Body(r404)["error"]["code"], 404);
}

TEST_F(ServeApiTest, StaticFilesStayInTheirFolder) {
  const auto index = Get("/");
  ASSERT_TRUE(index);
  EXPECT_EQ(index->status, 200);
  EXPECT_EQ(index->get_header_value("Content-Type"), "text/html; charset=utf-8");
  EXPECT_NE(index->body.find("fixture page"), std::string::npos);
  EXPECT_NE(index->get_header_value("Content-Security-Policy").find("script-src 'self'"), std::string::npos);
  for (const std::string bad : {"/../serve_api_test.cc", "/%2e%2e/serve_api_test.cc", "/..%2f..%2fetc/passwd",
                                "/.hidden", "/assets/../../web/index.html", "/escape/passwd"}) {
    const auto r = Get(bad);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 404) << bad;
    EXPECT_EQ(r->body.find("root:"), std::string::npos) << bad;
  }
}

TEST(ServeErrors, AnInternalErrorLeaksNothing) {
  const HttpResponse r = ErrorResponse(std::make_exception_ptr(std::logic_error("/home/secret/file.cc:42 vector::at")));
  EXPECT_EQ(r.status, 500);
  EXPECT_EQ(r.body.find("secret"), std::string::npos);
  EXPECT_EQ(r.body.find("vector"), std::string::npos);
  EXPECT_EQ(json::parse(r.body)["error"]["kind"], "internal");
}

TEST(ServeListen, APortInUseIsRefusedNotShared) {
  // httplib's own socket options set SO_REUSEPORT, under which a second server on a taken port
  // starts and shares its connections; ours must fail with the environment error instead.
  HttpServerOptions o;
  o.port = 0;
  HttpServer first(o);
  const int port = first.Start();
  ASSERT_GT(port, 0);
  o.port = port;
  HttpServer second(o);
  EXPECT_THROW(second.Start(), EnvironmentError);
}

TEST(ServeListen, ABurstOfConnectionsIsQueuedNotDropped) {
  // A bound server that does not accept yet: every handshake that the kernel completes waits in
  // the accept queue, whose length is the listen backlog. 200 clients connecting at once all
  // complete (backlog 1024); with httplib's built-in backlog of 5, six would complete and the rest
  // would wait for their SYN's retransmission (1 s, RFC 6298's initial RTO).
  HttpServerOptions o;
  o.port = 0;
  HttpServer server(o);
  const int port = server.Start();
  ASSERT_GT(port, 0);
  constexpr int kClients = 200;
  std::vector<int> fds;
  for (int i = 0; i < kClients; ++i) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    ASSERT_GE(fd, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const int rc = ::connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof(a));
    ASSERT_TRUE(rc == 0 || errno == EINPROGRESS);
    fds.push_back(fd);
  }
  // Wait up to 0.8 s (under the 1 s retransmission) for every handshake.
  int connected = 0;
  std::vector<bool> done(fds.size(), false);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(800);
  while (connected < kClients && std::chrono::steady_clock::now() < deadline) {
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (done[i]) {
        continue;
      }
      pollfd p{fds[i], POLLOUT, 0};
      if (::poll(&p, 1, 0) == 1 && (p.revents & POLLOUT)) {
        int err = 0;
        socklen_t len = sizeof(err);
        ::getsockopt(fds[i], SOL_SOCKET, SO_ERROR, &err, &len);
        EXPECT_EQ(err, 0);
        done[i] = true;
        ++connected;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  for (const int fd : fds) {
    ::close(fd);
  }
  EXPECT_EQ(connected, kClients);
}

TEST(ServeToken, RequiredOffLoopbackAndChecked) {
  // Anything but the loopback without a token: refused at start, exit 2 naming --token.
  const CliRun open = RunCli({"serve", "--bind", "0.0.0.0", "--port", "0"}, ".", true);
  EXPECT_EQ(open.code, 2);
  EXPECT_NE(open.out.find("--token"), std::string::npos) << open.out;
  const fs::path web = fs::current_path() / ("serve_token_web." + std::to_string(getpid()));
  fs::create_directories(web);
  std::ofstream(web / "index.html") << "<!doctype html><title>token page</title>";
  ServerProcess s({"--token", "s3cret", "--web", web.string()});
  ASSERT_GT(s.port(), 0) << s.first_line();
  auto c = s.Client();
  EXPECT_EQ(c.Get("/api/gpus")->status, 401);
  EXPECT_EQ(c.Get("/api/gpus", {{"Authorization", "Bearer wrong"}})->status, 401);
  EXPECT_EQ(c.Get("/api/gpus", {{"Authorization", "Bearer s3cret"}})->status, 200);
  EXPECT_EQ(c.Get("/health")->status, 200);
  // Issue 26 req. 7, token mode in a browser: the page (no data) loads without the token; opened
  // as /#token=..., it posts the token once and gets it back as an HttpOnly, SameSite=Strict
  // cookie, which the API then accepts in place of the header.
  const auto page = c.Get("/");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200);
  EXPECT_NE(page->body.find("token page"), std::string::npos);
  EXPECT_EQ(c.Post("/api/session", "{}", "application/json")->status, 401);
  const auto session = c.Post("/api/session", {{"Authorization", "Bearer s3cret"}}, "{}", "application/json");
  ASSERT_TRUE(session);
  EXPECT_EQ(session->status, 200);
  const std::string cookie = session->get_header_value("Set-Cookie");
  EXPECT_EQ(cookie.rfind("gpuplan_token=s3cret;", 0), 0u) << cookie;
  EXPECT_NE(cookie.find("HttpOnly"), std::string::npos) << cookie;
  EXPECT_NE(cookie.find("SameSite=Strict"), std::string::npos) << cookie;
  EXPECT_EQ(c.Get("/api/gpus", {{"Cookie", "theme=dark; gpuplan_token=s3cret"}})->status, 200);
  EXPECT_EQ(c.Get("/api/gpus", {{"Cookie", "gpuplan_token=wrong"}})->status, 401);
  EXPECT_EQ(c.Get("/api/gpus", {{"Cookie", "xgpuplan_token=s3cret"}})->status, 401);
  EXPECT_EQ(s.Stop(), 0);
  fs::remove_all(web);
  // A token a cookie cannot hold is refused at start.
  const CliRun bad = RunCli({"serve", "--port", "0", "--token", "a;b"}, ".", true);
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.out.find("--token"), std::string::npos) << bad.out;
}

// A small validator for the subset of JSON Schema the OpenAPI document uses: type (one or a
// list), nullable, required, properties, items, additionalProperties and $ref to
// #/components/schemas. Returns the first mismatch, with its path; empty when it conforms.
std::string Validate(const json& v, const json& schema, const json& doc, const std::string& at) {
  if (schema.contains("$ref")) {
    const std::string ref = schema["$ref"];
    const std::string prefix = "#/components/schemas/";
    return Validate(v, doc["components"]["schemas"][ref.substr(prefix.size())], doc, at);
  }
  if (v.is_null() && schema.value("nullable", false)) {
    return "";
  }
  if (schema.contains("type")) {
    const std::string t = schema["type"];
    const bool ok = (t == "object" && v.is_object()) || (t == "array" && v.is_array()) ||
                    (t == "string" && v.is_string()) || (t == "boolean" && v.is_boolean()) ||
                    (t == "integer" && v.is_number_integer()) || (t == "number" && v.is_number());
    if (!ok) {
      return at + ": expected " + t + ", got " + v.dump().substr(0, 60);
    }
  }
  if (v.is_object()) {
    const json required = schema.contains("required") ? schema["required"] : json::array();
    for (const auto& k : required) {
      if (!v.contains(k.get<std::string>())) {
        return at + ": missing required key " + k.get<std::string>();
      }
    }
    const json properties = schema.contains("properties") ? schema["properties"] : json::object();
    for (const auto& [k, sub] : properties.items()) {
      if (v.contains(k)) {
        if (auto e = Validate(v[k], sub, doc, at + "." + k); !e.empty()) {
          return e;
        }
      }
    }
    if (schema.contains("additionalProperties") && schema["additionalProperties"].is_object()) {
      for (const auto& [k, sub] : v.items()) {
        if (auto e = Validate(sub, schema["additionalProperties"], doc, at + "." + k); !e.empty()) {
          return e;
        }
      }
    }
  }
  if (v.is_array() && schema.contains("items")) {
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (auto e = Validate(v[i], schema["items"], doc, at + "[" + std::to_string(i) + "]"); !e.empty()) {
        return e;
      }
    }
  }
  return "";
}

TEST_F(ServeApiTest, EveryRouteOfTheOpenApiDocumentAnswersAsDescribed) {
  const json doc = Body(Get("/api/openapi.json"));
  ASSERT_EQ(doc["openapi"].get<std::string>().substr(0, 2), "3.");
  int checked = 0;
  for (const auto& [path, item] : doc["paths"].items()) {
    for (const auto& [method, op] : item.items()) {
      // The document's own example request: path parameters, query and body.
      std::string url = path;
      std::string query;
      const json parameters = op.contains("parameters") ? op["parameters"] : json::array();
      for (const auto& p : parameters) {
        if (!p.contains("example")) {
          continue;
        }
        const std::string value = p["example"].is_string() ? p["example"].get<std::string>() : p["example"].dump();
        if (p["in"] == "path") {
          url.replace(url.find("{" + p["name"].get<std::string>() + "}"), p["name"].get<std::string>().size() + 2, value);
        } else {
          query += (query.empty() ? "?" : "&") + p["name"].get<std::string>() + "=" + value;
        }
      }
      if (method != "get") {
        ASSERT_TRUE(op.contains("requestBody")) << path;
      }
      const httplib::Result r = method == "get"
                                    ? Get(url + query)
                                    : Post(url + query, op["requestBody"]["content"]["application/json"]["example"]);
      ASSERT_TRUE(r) << method << " " << path;
      // The examples are good requests: each must be answered.
      EXPECT_EQ(r->status, 200) << method << " " << url << ": " << r->body;
      const std::string status = std::to_string(r->status);
      ASSERT_TRUE(op["responses"].contains(status)) << method << " " << url << " answered " << status << ": " << r->body;
      const json& content = op["responses"][status]["content"];
      if (content.contains("application/json")) {
        const json body = json::parse(r->body);
        EXPECT_EQ(Validate(body, content["application/json"]["schema"], doc, "$"), "") << method << " " << url;
      } else {
        EXPECT_TRUE(content.contains("text/csv")) << path;
      }
      ++checked;
    }
  }
  EXPECT_GE(checked, 16);
}

// The meter routes' query parameters come from the options tables the handlers read the query
// with. Expected by hand from docs/cli.md's flags of each command, less the server's own files
// (--db, --offers, --alerts): the document names exactly what the server takes.
TEST_F(ServeApiTest, MeterQueryParametersAreTheCommandsFlags) {
  const json doc = Body(Get("/api/openapi.json"));
  const std::map<std::string, std::vector<std::string>> expected = {
      {"/api/meter/report", {"from", "to", "by", "offer"}},
      {"/api/meter/export", {"from", "to", "basis"}},
      {"/api/meter/timeline", {"from", "to", "step", "offer"}},
      {"/api/meter/alerts", {"from", "to", "offer"}},
  };
  for (const auto& [path, names] : expected) {
    std::vector<std::string> shown;
    for (const auto& p : doc["paths"][path]["get"]["parameters"]) {
      EXPECT_EQ(p["in"], "query") << path;
      shown.push_back(p["name"].get<std::string>());
    }
    EXPECT_EQ(shown, names) << path;
  }
  // A choice is typed with its values: --by gpu | user | job | pod.
  const json by = doc["paths"]["/api/meter/report"]["get"]["parameters"][2];
  EXPECT_EQ(by["schema"]["enum"], json({"gpu", "user", "job", "pod"}));
}

// One route table (issue 27 req. 6): every route the server adds is in the OpenAPI document the
// real server serves on 127.0.0.1, and every operation of the document is a route of the server.
// Expected by hand: the routes src/serve/README.md describes.
TEST_F(ServeApiTest, EveryRouteIsInTheDocumentAndEveryOperationIsARoute) {
  ServeRequest request;
  request.port = 0;
  const std::unique_ptr<HttpServer> server = NewServeServer(request, DataDir());
  std::set<std::pair<std::string, std::string>> registered;
  for (const auto& [method, pattern] : server->Routes()) {
    EXPECT_TRUE(registered.emplace(method, pattern).second) << method << " " << pattern << " added twice";
  }
  std::set<std::pair<std::string, std::string>> documented;
  const json doc = Body(Get("/api/openapi.json"));
  for (const auto& [path, item] : doc["paths"].items()) {
    for (const auto& [method, op] : item.items()) {
      std::string upper = method;
      for (char& c : upper) {
        c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      }
      documented.emplace(upper, path);
    }
  }
  EXPECT_EQ(registered, documented);
  const std::set<std::pair<std::string, std::string>> expected = {
      {"GET", "/health"},
      {"POST", "/api/session"},
      {"GET", "/api/gpus"},
      {"GET", "/api/models"},
      {"GET", "/api/frameworks"},
      {"GET", "/api/offers"},
      {"GET", "/api/meter/offers"},
      {"GET", "/api/options"},
      {"POST", "/api/fit"},
      {"POST", "/api/cost/breakeven"},
      {"POST", "/api/cost/compare"},
      {"POST", "/api/cost/optimize"},
      {"POST", "/api/cost/tco"},
      {"POST", "/api/plan"},
      {"GET", "/api/meter/report"},
      {"GET", "/api/meter/export"},
      {"GET", "/api/meter/timeline"},
      {"GET", "/api/meter/alerts"},
      {"GET", "/api/check/reports"},
      {"GET", "/api/check/reports/{name}"},
      {"POST", "/api/check/compare"},
      {"GET", "/api/openapi.json"},
  };
  EXPECT_EQ(documented, expected);
  // /api/options lists the tables the routes take: fit's, the four cost jobs', the four meter
  // queries'.
  std::set<std::string> tables;
  const json options = Body(Get("/api/options"));
  for (const auto& [name, list] : options.items()) {
    tables.insert(name);
    EXPECT_FALSE(list.empty()) << name;
  }
  EXPECT_EQ(tables, (std::set<std::string>{"fit", "breakeven", "compare", "optimize", "tco", "plan", "meter_report",
                                           "meter_export", "meter_timeline", "meter_alerts"}));
}

// The same bad input with two errors reports the same first error on both front ends, the
// option spelled each front end's way (issue 27 req. 6): the library orders the checks.
TEST_F(ServeApiTest, TheCliAndTheApiReportTheSameFirstError) {
  // An unknown model and an out-of-range --tp: the model comes first (fit always named it first).
  const json api_fit = Body(Post("/api/fit", {{"model", "Qwen2.5-7BB"}, {"tp", 0}}))["error"];
  const CliRun cli_fit = RunCli({"fit", "--model", "Qwen2.5-7BB", "--tp", "0", "--json"}, dir_->string());
  EXPECT_EQ(cli_fit.code, 2);
  const json cli_fit_error = json::parse(cli_fit.out)["error"];
  EXPECT_EQ(api_fit["field"], "model");
  EXPECT_EQ(cli_fit_error["field"], "--model");
  EXPECT_EQ(api_fit["message"], cli_fit_error["message"]);
  EXPECT_EQ(api_fit["suggestions"], cli_fit_error["suggestions"]);

  // Two out-of-range options, --tp (the table's check) and --lora-dropout (checked by PrepareFit
  // too, fit_request.cc): PrepareFit's error comes first on both front ends, whatever the order
  // they were given in.
  const json api_two = Body(Post("/api/fit", {{"model", "Qwen2.5-7B"}, {"tp", 0}, {"lora_dropout", 1.5}}))["error"];
  const CliRun cli_two =
      RunCli({"fit", "--model", "Qwen2.5-7B", "--tp", "0", "--lora-dropout", "1.5", "--json"}, dir_->string());
  const json cli_two_error = json::parse(cli_two.out)["error"];
  EXPECT_EQ(api_two["field"], "lora_dropout");
  EXPECT_EQ(cli_two_error["field"], "--lora-dropout");
  EXPECT_EQ(api_two["message"], cli_two_error["message"]);

  // Offers for an A100 only, asked for an H100, and an --extrapolate that is not month or
  // year: the offers' error comes first (cost always named it first).
  const std::string offers = ReadText(DataDir() + "/offers/nanjing-a100.yaml");
  Write("offers", offers);
  const json api_cost = Body(Post("/api/cost/compare", {{"offers", offers},
                                                       {"hours_per_month", 100},
                                                       {"gpu", "H100 SXM 80GB"},
                                                       {"extrapolate", "week"}}))["error"];
  const CliRun cli_cost = RunCli({"cost", "compare", "--offers", "offers", "--hours-per-month", "100", "--gpu",
                                  "H100 SXM 80GB", "--extrapolate", "week", "--json"},
                                 dir_->string());
  EXPECT_EQ(cli_cost.code, 2);
  const json cli_cost_error = json::parse(cli_cost.out)["error"];
  EXPECT_EQ(api_cost["field"], "gpu");
  EXPECT_EQ(cli_cost_error["field"], "--gpu");
  EXPECT_EQ(api_cost["message"], cli_cost_error["message"]);

  // A message that names options: flags on the command line, JSON keys in the API.
  const json api_epochs = Body(Post("/api/fit", {{"model", "Qwen2.5-7B"}, {"gpu", "A100 80GB SXM"}, {"epochs", 2}}))["error"];
  const CliRun cli_epochs =
      RunCli({"fit", "--model", "Qwen2.5-7B", "--gpu", "A100 80GB SXM", "--epochs", "2", "--json"}, dir_->string());
  const json cli_epochs_error = json::parse(cli_epochs.out)["error"];
  EXPECT_EQ(api_epochs["field"], "epochs");
  EXPECT_EQ(api_epochs["message"], "epochs and dataset_tokens go together");
  EXPECT_EQ(cli_epochs_error["field"], "--epochs");
  EXPECT_EQ(cli_epochs_error["message"], "--epochs and --dataset-tokens go together");
}

}  // namespace
}  // namespace gpuplan
