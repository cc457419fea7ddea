#include "serve/api.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <vector>

#include "catalog/gpu_catalog.h"
#include "catalog/listings.h"
#include "check/compare.h"
#include "check/report.h"
#include "core/error.h"
#include "core/work_budget.h"
#include "cost/cost_options.h"
#include "plan/fit_job.h"
#include "cost/requests.h"
#include "fit/fit_options.h"
#include "fit/framework.h"
#include "fit/render/catalog_json.h"
#include "check/render/check_json.h"
#include "cost/render/cost_json.h"
#include "plan/render/fit_job_json.h"
#include "plan/plan_request.h"
#include "plan/render/plan_json.h"
#include "meter/render/meter_json.h"
#include "meter/meter_options.h"
#include "meter/monitor.h"
#include "meter/report.h"
#include "read/file_text.h"
#include "read/json_fields.h"
#include "read/time_text.h"
#include "serve/routes.h"

namespace gpuplan {

namespace fs = std::filesystem;

// What every route shares; the server's handlers hold it by shared_ptr.
struct ApiState {
  ServeRequest request;
  std::string data_dir;
  GpuCatalog catalog;
  // GLPK (the rental optimiser, cost/optimizer.h) keeps process-wide state: one solve at a time.
  std::timed_mutex solver;  // one GLPK solve at a time; waited for no longer than the request's budget
};

namespace {

constexpr double kBytesPerMib = 1024.0 * 1024.0;
constexpr int kStatusNotFound = 404;
// The names a request's texts go by in answers and errors (never a server path).
constexpr const char* kOffersName = "offers";
constexpr const char* kUsageName = "usage";

nlohmann::json ParseBody(const HttpRequest& req) {
  if (req.body.empty()) {
    throw InputError("the body must be a JSON object", "", 0, "body");
  }
  nlohmann::json j = ParseJsonText(req.body, "body");
  if (!j.is_object()) {
    FailNotObject();
  }
  return j;
}

// A JSON object of the query (?by=user&top=3) with each value of the table's kind; a value that
// is not of the kind stays a string, so ApplyJsonOptions names the key and the kind.
template <typename Req>
nlohmann::json QueryToJson(const OptionTable<Req>& table, const std::map<std::string, std::string>& query) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& entry : query) {
    // Not a structured binding: clang 14 (the fuzz build) cannot capture one in a lambda.
    const std::string& key = entry.first;
    const std::string& text = entry.second;
    const auto it = std::find_if(table.begin(), table.end(), [&key](const OptionSpec<Req>& o) { return o.key == key; });
    j[key] = text;
    if (it == table.end()) {
      continue;
    }
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    const bool number = !text.empty() && end != nullptr && *end == '\0';
    if ((it->kind == OptionKind::kInt || it->kind == OptionKind::kDouble) && number) {
      j[key] = v;
    } else if (it->kind == OptionKind::kFlag && (text == "true" || text == "false")) {
      j[key] = text == "true";
    }
  }
  return j;
}

// Keys a request may not set: the server's own files.
void RefuseKeys(const nlohmann::json& j, const std::vector<std::string>& keys, const std::string& why) {
  for (const std::string& k : keys) {
    if (j.contains(k)) {
      throw InputError("not accepted over HTTP: " + why, "", 0, k);
    }
  }
}

template <typename Req>
nlohmann::json OptionsToJson(const OptionTable<Req>& table) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& o : table) {
    static constexpr const char* kKinds[] = {"integer", "number", "string", "boolean", "strings"};
    out.push_back({{"key", o.key},
                   {"flag", o.flag},
                   {"kind", kKinds[static_cast<int>(o.kind)]},
                   {"default", o.DefaultText()},
                   {"required", o.required},
                   {"values", o.check.choices},
                   {"unit", o.unit},
                   {"help", o.help}});
  }
  return out;
}

// Takes the solver lock, waiting no longer than the request's budget: a request queued behind a
// long solve ends with the budget's error instead of waiting without end (issue 26 req. 8).
void LockWithinBudget(std::unique_lock<std::timed_mutex>& lock) {
  const auto deadline = WorkBudgetDeadline();
  if (!deadline) {
    lock.lock();
    return;
  }
  while (!lock.try_lock_until(std::min(*deadline, std::chrono::steady_clock::now() + std::chrono::milliseconds(100)))) {
    CheckWorkBudget();  // past the deadline, or the server stopping: the budget's error
  }
}

HttpResponse Fit(ApiState& s, const HttpRequest& req) {
  nlohmann::json body = ParseBody(req);
  FitRequest r;
  r.presets_only = true;
  if (body.contains("config")) {
    const nlohmann::json& c = body["config"];
    if (!c.is_string() && !c.is_object()) {
      throw InputError("expected a config.json, as text or as an object, got " + c.dump().substr(0, 40), "", 0,
                       "config");
    }
    r.model_config = c.is_string() ? c.get<std::string>() : c.dump();
    body.erase("config");
    if (!body.contains("model")) {
      body["model"] = "";  // named from the config (LoadModelFromConfigText)
    }
  }
  ReadJson(body, r);
  if (!r.offers.empty()) {
    r.offers_text = r.offers;
    r.offers = kOffersName;
  }
  if (!r.check_report.empty()) {  // the report's JSON text, never a file on the server
    r.check_report_text = r.check_report;
    r.check_report = "check_report";
  }
  // The values' checks, in the order the CLI reports them (RunFit makes them too), before the
  // wait for the solver: a bad request gets its own error at once, not the budget's.
  CheckFitRequest(r, s.data_dir);
  std::unique_lock<std::timed_mutex> lock(s.solver, std::defer_lock);
  if (r.offers_text) {
    LockWithinBudget(lock);  // offers: the job is priced by the rental optimiser
  }
  const FitJobResult res = RunFit(r, s.catalog, s.data_dir);
  return HttpResponse::Json(FitJobToJson(res));
}

// The offers and usage keys carry the files' text.
void TextsInsteadOfFiles(CostRequest& r) {
  if (!r.offers.empty()) {
    r.offers_text = r.offers;
    r.offers = kOffersName;
  }
  if (!r.usage.empty()) {
    r.usage_text = r.usage;
    r.usage = kUsageName;
  }
}

template <typename Req, typename Run, typename ToJson>
HttpResponse CostJob(ApiState& s, const HttpRequest& req, const OptionTable<Req>& table, Run run, ToJson to_json) {
  const nlohmann::json body = ParseBody(req);
  Req r;
  r.given = ReadJsonOptions(table, body, r);
  TextsInsteadOfFiles(r);
  // The values' checks, as the job (Run*) and the CLI make them, before the wait for the solver.
  CheckCostRequest(r, s.catalog);
  std::unique_lock<std::timed_mutex> lock(s.solver, std::defer_lock);
  LockWithinBudget(lock);
  return HttpResponse::Json(to_json(run(r, s.catalog)));
}

HttpResponse CostBreakeven(ApiState& s, const HttpRequest& req) {
  return CostJob(s, req, BreakevenOptionTable(), &RunBreakeven, &BreakevenToJson);
}

HttpResponse CostCompare(ApiState& s, const HttpRequest& req) {
  return CostJob(s, req, CompareOptionTable(), &RunCompare, &CompareToJson);
}

HttpResponse CostOptimize(ApiState& s, const HttpRequest& req) {
  return CostJob(s, req, OptimizeOptionTable(), &RunOptimize, &OptimizeToJson);
}

HttpResponse CostTco(ApiState& s, const HttpRequest& req) {
  // A request's --model must be a preset (it never names a file on the server).
  return CostJob(
      s, req, TcoOptionTable(),
      [&s](TcoRequest& r, const GpuCatalog& c) {
        r.presets_only = true;
        return RunTco(r, c, s.data_dir);
      },
      &TcoToJson);
}

// POST /api/plan: {"workload": TEXT, "offers": [TEXT, ...]}, the files' texts (never a file on
// the server: every job's model a preset, --usage-out refused).
HttpResponse PlanRoute(ApiState& s, const HttpRequest& req) {
  nlohmann::json body = ParseBody(req);
  if (!body.is_object() || !body.contains("workload") || !body["workload"].is_string()) {
    throw InputError("expected the workload file's text (docs/plan.md §1)", "", 0, "workload");
  }
  PlanRequest q;
  q.workload_text = body["workload"].get<std::string>();
  q.workload = "workload";
  q.presets_only = true;
  body.erase("workload");
  RefuseKeys(body, {"usage_out", "alerts_out", "markdown", "against"},
             "the server reads and writes no file a request names; the usage is in the answer's months[].rentals, the alerts file in `alerts`");
  q.given = ReadJsonOptions(PlanOptionTable(), body, q);
  q.offers_text = q.offers;
  q.offers.clear();
  for (std::size_t i = 0; i < q.offers_text.size(); ++i) {
    q.offers.push_back("offers[" + std::to_string(i) + "]");
  }
  std::unique_lock<std::timed_mutex> lock(s.solver, std::defer_lock);
  LockWithinBudget(lock);  // the rental optimiser
  const PlanResult r = RunPlanRequest(q, s.catalog, s.data_dir);
  return HttpResponse::Json(PlanResultToJson(r));
}

void NeedMeterDb(const ApiState& s) {
  if (s.request.meter_db.empty()) {
    throw InputError("this server has no meter database (start it with --meter-db FILE)", "", 0, "meter_db");
  }
}

// A meter route's request: the query by the table's JSON keys, with the server's database,
// offers and alerts files (a request never names a server file).
template <typename Req>
Req MeterQuery(const ApiState& s, const HttpRequest& req, const OptionTable<Req>& table) {
  NeedMeterDb(s);
  nlohmann::json j = QueryToJson(table, req.query);
  RefuseKeys(j, kServerFileKeys, "the server's --meter-db, --meter-offers and --meter-alerts are used");
  j["db"] = s.request.meter_db;
  const auto has = [&table](const char* key) {
    return std::any_of(table.begin(), table.end(), [key](const OptionSpec<Req>& o) { return o.key == key; });
  };
  // The server's offers price the answer when the query names an `offer`, or when the file has one
  // offer (that one). Without `offer` and with several, the answer is unpriced, as the page's "not
  // priced by an offer" says: passing the file made every such request a 400 ("name one with
  // `offer`").
  if (!s.request.meter_offers.empty() && has("offers") &&
      (j.contains("offer") || LoadOffers(s.request.meter_offers, s.catalog).offers.size() == 1)) {
    j["offers"] = s.request.meter_offers;
  }
  if (!s.request.meter_alerts.empty() && has("alerts")) {
    j["alerts"] = s.request.meter_alerts;
  }
  Req r;
  ApplyJsonOptions(table, j, r);
  return r;
}

HttpResponse MeterReportRoute(ApiState& s, const HttpRequest& req) {
  const MeterReportRequest r = MeterQuery(s, req, MeterReportOptionTable());
  return HttpResponse::Json(MeterReportToJson(RunMeterReport(r, s.catalog)));
}

HttpResponse MeterExportRoute(ApiState& s, const HttpRequest& req) {
  const MeterExportRequest r = MeterQuery(s, req, MeterExportOptionTable());
  HttpResponse out;
  out.content_type = "text/csv; charset=utf-8";
  out.body = RunMeterExport(r, s.catalog).csv;
  return out;
}

// Money and hours over time: `gpuplan meter timeline --json` (each slot's total is what
// `meter report --from SLOT --to END` answers; one read of the store for all of them).
HttpResponse MeterTimelineRoute(ApiState& s, const HttpRequest& req) {
  const MeterTimelineRequest r = MeterQuery(s, req, MeterTimelineOptionTable());
  return HttpResponse::Json(MeterTimelineToJson(RunMeterTimeline(r, s.catalog)));
}

// The alerts of the range: `gpuplan meter alerts --json` with the server's alerts file's rules.
HttpResponse MeterAlertsRoute(ApiState& s, const HttpRequest& req) {
  const MeterAlertsRequest r = MeterQuery(s, req, MeterAlertsOptionTable());
  return HttpResponse::Json(MeterAlertsToJson(RunMeterAlerts(r, s.catalog)));
}

void NeedReports(const ApiState& s) {
  if (s.request.reports.empty()) {
    throw InputError("this server has no reports folder (start it with --reports DIR)", "", 0, "reports");
  }
}

// The report files of the folder: *.json directly in it, by name. Skipped, each with why: a
// name that is not UTF-8 (no request could name it), a link that leads out of the folder (a link
// to /etc/passwd must not be read through the API), anything but a regular file.
std::vector<fs::path> ReportFiles(const std::string& dir, nlohmann::json* skipped = nullptr) {
  std::vector<fs::path> out;
  std::error_code ec;
  const fs::path root = fs::canonical(dir, ec);
  if (ec) {
    throw EnvironmentError("cannot read the reports folder " + dir + ": " + ec.message());
  }
  const auto skip = [&](const std::string& name, const std::string& why) {
    if (skipped != nullptr) {
      skipped->push_back({{"name", name}, {"why", why}});
    }
  };
  for (const auto& e : fs::directory_iterator(root, ec)) {
    const std::string name = e.path().filename().string();
    if (e.path().extension() != ".json" || name.empty() || name[0] == '.') {
      continue;
    }
    std::error_code fec;
    if (FirstNonUtf8(name)) {
      skip(name, "its name is not UTF-8");
      continue;
    }
    if (e.is_symlink(fec)) {
      const fs::path target = fs::canonical(e.path(), fec);
      if (fec || target.parent_path() != root) {
        skip(name, "a link that leads out of the reports folder");
        continue;
      }
    }
    if (!e.is_regular_file(fec)) {
      skip(name, "not a regular file");
      continue;
    }
    out.push_back(e.path());
  }
  if (ec) {
    throw EnvironmentError("cannot read the reports folder " + dir + ": " + ec.message());
  }
  std::sort(out.begin(), out.end());
  return out;
}

HttpResponse ReportList(ApiState& s, const HttpRequest&) {
  NeedReports(s);
  nlohmann::json list = nlohmann::json::array();
  nlohmann::json skipped = nlohmann::json::array();
  for (const fs::path& p : ReportFiles(s.request.reports, &skipped)) {
    nlohmann::json item = {{"name", p.filename().string()}};
    try {
      const CheckReport r = LoadReport(p.string()).report;
      item["verdict"] = ToString(r.verdict);
      item["exit_code"] = r.ExitCode();
      item["started"] = r.started;
      item["finished"] = r.finished;
      item["expect"] = r.expect;
      item["expected_card"] = r.expected_card;
      item["tests"] = r.tests.size();
      item["error"] = nullptr;
    } catch (const InputError& e) {
      item["error"] = e.message();  // a file that is not a report: listed, with why
    }
    list.push_back(item);
  }
  return HttpResponse::Json({{"reports", list}, {"skipped", skipped}});
}

HttpResponse ReportOne(ApiState& s, const HttpRequest& req) {
  NeedReports(s);
  const std::string name = req.params.at("name");
  for (const fs::path& p : ReportFiles(s.request.reports)) {
    if (p.filename().string() == name) {
      return HttpResponse::Json(CheckReportToJson(LoadReport(p.string()).report));
    }
  }
  return ErrorResponse(kStatusNotFound, "input", "no report named '" + name + "' in the reports folder", "name");
}

// `gpuplan check compare NAME... --json -` run in the reports folder: the body names two or
// more reports of the folder ({"reports": ["a.json", "b.json"]}); each is known by its name.
HttpResponse CompareRoute(ApiState& s, const HttpRequest& req) {
  NeedReports(s);
  const nlohmann::json body = ParseBody(req);
  for (const auto& [key, value] : body.items()) {
    if (key != "reports") {
      throw InputError("unknown key: the body names the reports to compare ({\"reports\": [names]})", "", 0, key);
    }
  }
  if (!body.contains("reports") || !body["reports"].is_array()) {
    throw InputError("expected an array of report names", "", 0, "reports");
  }
  const std::vector<fs::path> files = ReportFiles(s.request.reports);
  std::vector<NamedReport> reports;
  CompareReportsRequest q;
  for (const auto& n : body["reports"]) {
    if (!n.is_string()) {
      throw InputError("expected report names, got " + n.dump().substr(0, 40), "", 0, "reports");
    }
    const std::string name = n.get<std::string>();
    const auto it = std::find_if(files.begin(), files.end(), [&name](const fs::path& p) { return p.filename().string() == name; });
    if (it == files.end()) {
      throw InputError("no report named '" + name + "' in the reports folder", "", 0, "reports");
    }
    reports.push_back(NamedReport{name, LoadReport(it->string()).report});
    q.reports.push_back(name);
  }
  return HttpResponse::Json(ComparisonToJson(CompareReports(reports, q, s.catalog)));
}

HttpResponse Health(ApiState&, const HttpRequest&) { return HttpResponse::Json({{"status", "ok"}}); }

// Token mode in a browser (issue 26 req. 7): the page, opened once as /#token=..., posts here
// with the bearer header; the answer keeps the token in an HttpOnly, SameSite=Strict cookie the
// server accepts besides the header (so no script can read it and no other site can send it).
HttpResponse Session(ApiState& s, const HttpRequest&) {
  const std::string& token = s.request.token;
  if (token.empty()) {
    return HttpResponse::Json({{"session", "open"}, {"token", false}});
  }
  HttpResponse out = HttpResponse::Json({{"session", "open"}, {"token", true}});
  out.headers["Set-Cookie"] = std::string(kTokenCookie) + "=" + token + "; HttpOnly; SameSite=Strict; Path=/";
  return out;
}

HttpResponse Gpus(ApiState& s, const HttpRequest&) { return HttpResponse::Json(GpusToJson(s.catalog)); }

// The presets, each `path` as the data folder names it ("models/Qwen2.5-7B.json"): the server's own
// folders are not a client's business (with --token the page may be served to another machine).
HttpResponse Models(ApiState& s, const HttpRequest&) {
  nlohmann::json j = ModelsToJson(ListModels(s.data_dir));
  for (auto& m : j) {
    m["path"] = "models/" + std::filesystem::path(m["path"].get<std::string>()).filename().string();
  }
  return HttpResponse::Json(j);
}

// The offers of the server's --meter-offers file (id, card, mode, price), for the usage view's
// list; empty without one.
HttpResponse MeterOffersRoute(ApiState& s, const HttpRequest&) {
  nlohmann::json list = nlohmann::json::array();
  if (!s.request.meter_offers.empty()) {
    const OfferSet set = LoadOffers(s.request.meter_offers, s.catalog);
    for (const Offer& offer : set.offers) {
      list.push_back({{"id", offer.id},
                      {"gpu", offer.gpu->name},
                      {"mode", ToString(offer.mode)},
                      {"price", offer.price},
                      {"currency", set.currency}});
    }
  }
  return HttpResponse::Json(list);
}

// The shipped example offers (data/offers/*.yaml), for the page's lists.
HttpResponse ShippedOffersRoute(ApiState& s, const HttpRequest&) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& shipped : ListShippedOffers(s.data_dir, s.catalog)) {
    list.push_back({{"name", shipped.name}, {"text", shipped.text}});
  }
  return HttpResponse::Json(list);
}

HttpResponse Frameworks(ApiState& s, const HttpRequest&) {
  return HttpResponse::Json(FrameworksToJson(LoadFrameworkCatalog(s.data_dir)));
}

// Every options table a route takes, by its name: from the route table, so /api/options lists
// exactly what the routes read.
HttpResponse Options(ApiState&, const HttpRequest&) {
  nlohmann::json out = nlohmann::json::object();
  for (const ApiRoute& route : ApiRoutes()) {
    if (!route.options.empty()) {
      out[route.options] = route.option_list();
    }
  }
  return HttpResponse::Json(out);
}

HttpResponse OpenApi(ApiState&, const HttpRequest&) { return HttpResponse::Json(OpenApiDocument()); }

template <typename Req, const OptionTable<Req>& (*Table)()>
nlohmann::json ListOptions() {
  return OptionsToJson(Table());
}

// Small offers, as an offers file's text (docs/offers.md): the example of the cost routes.
constexpr const char* kExampleOffers =
    "currency: CNY\n"
    "timezone: \"+08:00\"\n"
    "offers:\n"
    "  - id: a100-monthly\n"
    "    gpu: A100 80GB SXM\n"
    "    mode: monthly\n"
    "    price: 21900\n"
    "  - id: a100-on-demand\n"
    "    gpu: A100 80GB SXM\n"
    "    mode: on_demand\n"
    "    price: 50\n"
    "    granularity: second\n";

constexpr const char* kExampleUsage =
    "timestamp,gpus\n"
    "2027-03-01T09:00,2\n"
    "2027-03-01T10:00,2\n"
    "2027-03-01T11:00,1\n";

// A cost job's route: the body is the job's options by JSON key.
ApiRoute CostRoute(const std::string& job, ApiHandler handler, nlohmann::json (*list)(), const std::string& summary,
                   nlohmann::json example, const std::string& schema) {
  ApiRoute r;
  r.method = "POST";
  r.path = "/api/cost/" + job;
  r.handler = handler;
  r.upload = true;
  r.summary = summary;
  r.description = "The body: the keys of `gpuplan cost " + job +
                  "` (GET /api/options lists them); `offers` and `usage` are the files' text.";
  r.options = job;
  r.option_list = list;
  r.body_example = std::move(example);
  r.answer = "what `gpuplan cost " + job + " --json` prints";
  r.schema = schema;
  return r;
}

}  // namespace

const std::vector<ApiRoute>& ApiRoutes() {
  static const std::vector<ApiRoute> routes = [] {
    using nlohmann::json;
    std::vector<ApiRoute> t;
    const auto add = [&t](std::string method, std::string path, ApiHandler handler, std::string summary,
                          std::string answer, std::string schema) -> ApiRoute& {
      ApiRoute r;
      r.method = std::move(method);
      r.path = std::move(path);
      r.handler = handler;
      r.summary = std::move(summary);
      r.answer = std::move(answer);
      r.schema = std::move(schema);
      t.push_back(std::move(r));
      return t.back();
    };
    add("GET", "/health", &Health, "the server is up (no token needed)", "up", "Health").is_public = true;
    add("POST", "/api/session", &Session,
        "keep the bearer token in an HttpOnly, SameSite=Strict cookie (the page opened as /#token=...)",
        "the cookie is set (token mode)", "Session")
        .body_example = json::object();
    add("GET", "/api/gpus", &Gpus, "the GPU catalog, as gpuplan gpus --json", "the cards", "Gpus");
    add("GET", "/api/models", &Models, "the model presets, as gpuplan models --json", "the presets", "Models");
    add("GET", "/api/meter/offers", &MeterOffersRoute,
        "the offers of the server's --meter-offers file (empty without one), for choosing the offer a report prices "
        "by",
        "the offers", "MeterOffers");
    add("GET", "/api/offers", &ShippedOffersRoute,
        "the example offers files shipped in the data folder (offers/*.yaml): name and YAML text",
        "the shipped offers", "ShippedOffers");
    add("GET", "/api/frameworks", &Frameworks,
        "the framework profiles of fit --framework and the GGUF types, as gpuplan frameworks --json", "the profiles",
        "Frameworks");
    add("GET", "/api/options", &Options, "every job's options: the JSON keys of the request bodies",
        "per job, its options", "Options");
    ApiRoute& fit = add("POST", "/api/fit", &Fit, "gpuplan fit --json", "the fit, fits or not", "Fit");
    fit.upload = true;
    fit.description =
        "The body: fit's options by JSON key (GET /api/options). `model` names a preset; `config` (a config.json as "
        "text or object) sizes a model that is not one; `offers` is an offers file's text.";
    fit.options = "fit";
    fit.option_list = &ListOptions<FitRequest, &FitOptionTable>;
    fit.body_example = {{"model", "Qwen2.5-7B"}, {"task", "lora"}, {"seq", 2048}, {"gpu", "A100 80GB SXM"}};
    t.push_back(CostRoute("breakeven", &CostBreakeven, &ListOptions<BreakevenRequest, &BreakevenOptionTable>,
                          "hours per month at which two billing modes cost the same",
                          {{"offers", kExampleOffers}, {"month", "2027-03"}}, "Breakeven"));
    t.push_back(CostRoute("compare", &CostCompare, &ListOptions<CompareRequest, &CompareOptionTable>,
                          "every pure strategy's cost for the usage",
                          {{"offers", kExampleOffers}, {"usage", kExampleUsage}}, "Compare"));
    t.push_back(CostRoute("optimize", &CostOptimize, &ListOptions<OptimizeRequest, &OptimizeOptionTable>,
                          "the cheapest mix of reserved, on-demand and spot",
                          {{"offers", kExampleOffers}, {"usage", kExampleUsage}}, "Optimize"));
    t.push_back(CostRoute("tco", &CostTco, &ListOptions<TcoRequest, &TcoOptionTable>, "buy versus rent",
                          {{"offers", kExampleOffers}, {"hours_per_month", 300}, {"month", "2027-03"}}, "Tco"));
    ApiRoute& plan = add("POST", "/api/plan", &PlanRoute, "gpuplan plan --json: a workload over months to a rental plan",
                         "the plan, feasible or not", "Plan");
    plan.upload = true;
    plan.description =
        "The body: `workload`, the workload file's text (docs/plan.md §1; every job's model a preset), and `offers`, "
        "a list of offers files' texts.";
    plan.options = "plan";
    plan.option_list = &ListOptions<PlanRequest, &PlanOptionTable>;
    plan.body_example = {{"workload",
                          "months: 2027-03\nserving:\n  - {id: chat, model: Qwen2.5-7B, qps: 1}\n"},
                         {"offers", {kExampleOffers}}};
    ApiRoute& report = add("GET", "/api/meter/report", &MeterReportRoute,
                           "gpuplan meter report --json over the server's --meter-db", "the report", "MeterReport");
    report.options = "meter_report";
    report.option_list = &ListOptions<MeterReportRequest, &MeterReportOptionTable>;
    report.examples = {{"from", "2026-03-01"}, {"to", "2026-03-02"}, {"by", "gpu"}};
    ApiRoute& exp = add("GET", "/api/meter/export", &MeterExportRoute,
                        "gpuplan meter export: the measured use as the usage CSV gpuplan cost reads", "timestamp,gpus",
                        "");
    exp.options = "meter_export";
    exp.option_list = &ListOptions<MeterExportRequest, &MeterExportOptionTable>;
    exp.examples = {{"from", "2026-03-01"}, {"to", "2026-03-02"}, {"basis", "busy"}};
    ApiRoute& timeline = add("GET", "/api/meter/timeline", &MeterTimelineRoute,
                             "money and hours over time: gpuplan meter timeline --json over the server's --meter-db",
                             "the slots", "MeterTimeline");
    timeline.description =
        "Each slot's `total` is the `total` of `gpuplan meter report --from SLOT --to SLOT_END --json` (at most 744 "
        "slots, from one read of the database).";
    timeline.options = "meter_timeline";
    timeline.option_list = &ListOptions<MeterTimelineRequest, &MeterTimelineOptionTable>;
    timeline.examples = {{"from", "2026-03-01"}, {"to", "2026-03-02"}, {"step", "hour"}};
    ApiRoute& alerts = add("GET", "/api/meter/alerts", &MeterAlertsRoute,
                           "gpuplan meter alerts --json: the alerts of the range, the server's --meter-db replayed",
                           "the alerts", "MeterAlerts");
    alerts.description =
        "The rules are the server's --meter-alerts file's (else the defaults), the GPU-hour price and the budget's "
        "projection its --meter-offers'.";
    alerts.options = "meter_alerts";
    alerts.option_list = &ListOptions<MeterAlertsRequest, &MeterAlertsOptionTable>;
    alerts.examples = {{"from", "2026-03-01"}, {"to", "2026-03-02"}};
    add("GET", "/api/check/reports", &ReportList, "the check reports in the server's --reports folder",
        "one line per file", "Reports");
    ApiRoute& compare = add("POST", "/api/check/compare", &CompareRoute,
                            "gpuplan check compare --json over reports of the server's --reports folder",
                            "the reports side by side", "Comparison");
    compare.description = "The body names two or more reports of the folder, as GET /api/check/reports lists them.";
    compare.body_example = {{"reports", {"rtx4090.json", "h100x2-burn-in.json"}}};
    ApiRoute& one = add("GET", "/api/check/reports/{name}", &ReportOne, "one check report", "the report",
                        "CheckReport");
    one.examples = {{"name", "rtx4090.json"}};
    one.more_answers = {{"404", "no such report"}};
    add("GET", "/api/openapi.json", &OpenApi, "this document", "OpenAPI 3.0", "OpenApiDocument");
    return t;
  }();
  return routes;
}

std::unique_ptr<HttpServer> NewServeServer(const ServeRequest& r, const std::string& data_dir) {
  CheckGivenOptions(ServeOptionTable(), r, [](const OptionSpec<ServeRequest>&) { return true; });
  auto state = std::make_shared<ApiState>();
  state->request = r;
  state->data_dir = data_dir;
  state->catalog = LoadGpuCatalog(data_dir);
  if (!r.meter_db.empty() && !fs::is_regular_file(r.meter_db)) {
    throw InputError::Option("meter_db", "no such meter database", {}, r.meter_db, 0);
  }
  if (!r.meter_alerts.empty()) {
    LoadMeterMonitorOptions(r.meter_alerts);  // a bad file is refused at start, naming its line
  }
  if (!r.reports.empty() && !fs::is_directory(r.reports)) {
    throw InputError::Option("reports", "not a folder", {}, r.reports, 0);
  }
  // The token travels in a cookie too (POST /api/session): only characters a cookie value may hold.
  if (std::any_of(r.token.begin(), r.token.end(), [](unsigned char c) {
        return c <= 0x20 || c >= 0x7f || c == '"' || c == ',' || c == ';' || c == '\\';
      })) {
    throw InputError::Option("token",
                             "the token may hold printable ASCII but no space, quote, comma, semicolon or backslash");
  }
  HttpServerOptions o;
  o.bind = r.bind;
  o.port = static_cast<int>(r.port);
  o.token = r.token;
  o.threads = static_cast<int>(r.threads);
  o.keep_alive_seconds = r.keep_alive_seconds;
  o.max_requests_per_address = static_cast<int>(r.max_requests_per_address);
  o.max_connections_per_address = static_cast<int>(r.max_connections_per_address);
  o.static_root = r.web;
  for (const auto& h : r.allow_hosts) {
    if (h.empty() || h.find_first_of(":/[] \t") != std::string::npos || FirstNonUtf8(h)) {
      throw InputError::Option("allow_hosts",
                               "expected a host name such as gpu-box.lan (no port, scheme or path), got '" + h + "'");
    }
    o.allowed_hosts.push_back(h);
  }
  o.body_limit = static_cast<std::size_t>(r.body_limit_mib * kBytesPerMib);
  o.read_timeout_seconds = r.timeout_seconds;
  o.write_timeout_seconds = r.timeout_seconds;
  o.max_request_seconds = r.max_request_seconds;
  // The CLI's catalogue: answers in Chinese for ?lang=zh or Accept-Language: zh (issue 26 req. 4).
  o.messages = std::make_shared<const Messages>(Messages::Load(data_dir + "/messages.json"));
  auto server = std::make_unique<HttpServer>(o);
  const std::size_t upload_limit = static_cast<std::size_t>(r.upload_limit_mib * kBytesPerMib);
  // One table of routes (ApiRoutes): each handler holds the state; the server owns the handlers.
  for (const ApiRoute& route : ApiRoutes()) {
    HttpHandler handler = [state, f = route.handler](const HttpRequest& req) { return f(*state, req); };
    const RouteOptions options{route.upload ? upload_limit : 0, route.is_public};
    if (route.method == "GET") {
      server->Get(route.path, std::move(handler), options);
    } else {
      server->Post(route.path, std::move(handler), options);
    }
  }
  return server;
}

}  // namespace gpuplan
