// The OpenAPI 3.0 document of the serve API (api.h). Each operation carries an example request
// (parameters' `example`, the body's `example`): tests/serve calls every operation with it and
// validates the answer against the schema here, so the document cannot drift from the server.
#include "serve/api.h"

#include <map>

#include "meter/meter_options.h"

namespace gpuplan {
namespace {

using nlohmann::json;

json Ref(const std::string& name) { return {{"$ref", "#/components/schemas/" + name}}; }

json JsonContent(const json& schema) { return {{"application/json", {{"schema", schema}}}}; }

json Ok(const std::string& what, const json& schema) {
  return {{"description", what}, {"content", JsonContent(schema)}};
}

json Error(const std::string& what) { return {{"description", what}, {"content", JsonContent(Ref("Error"))}}; }

// The answers every /api route may give besides its own.
json WithErrors(json responses, bool body) {
  responses["400"] = Error("bad input: the field, the CLI's message, the closest names");
  responses["401"] = Error("a token is required and was missing or wrong");
  responses["403"] = Error("the Host is not the loopback (a server without a token)");
  if (body) {
    responses["413"] = Error("the body is over the route's limit");
    responses["415"] = Error("the body is not application/json");
    responses["422"] = Error("the answer is no and there is no result to show (the offers cannot serve the usage)");
  }
  responses["500"] = Error("a bug; the answer names nothing of the server");
  responses["503"] = Error("an environment problem on the server (see its log)");
  return responses;
}

// A query parameter; an empty example: none.
json Query(const std::string& name, const std::string& what, const std::string& example) {
  json q = {{"name", name}, {"in", "query"}, {"required", false}, {"description", what}, {"schema", {{"type", "string"}}}};
  if (!example.empty()) {
    q["example"] = example;
  }
  return q;
}

// A meter route's query parameters, from the options table its handler reads the query with
// (MeterQuery in api.cc): every key but the server's own files (db, offers, alerts), each with
// the table's help, kind and choices, so the document cannot drift from what the server takes.
// `examples`: the example value per key the document shows (and tests/serve sends).
template <typename Req>
json QueryOf(const OptionTable<Req>& table, const std::map<std::string, std::string>& examples) {
  json out = json::array();
  for (const auto& o : table) {
    if (o.key == "db" || o.key == "offers" || o.key == "alerts") {
      continue;
    }
    json q = Query(o.key, o.help, examples.count(o.key) != 0 ? examples.at(o.key) : "");
    if (!o.check.choices.empty()) {
      q["schema"]["enum"] = o.check.choices;
    }
    out.push_back(std::move(q));
  }
  return out;
}

// Small offers, as an offers file's text (docs/offers.md).
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

json CostPath(const std::string& job, const std::string& summary, const json& example, const std::string& schema) {
  return {{"post",
           {{"summary", summary},
            {"description", "The body: the keys of `gpuplan cost " + job +
                                "` (GET /api/options lists them); `offers` and `usage` are the files' text."},
            {"requestBody",
             {{"required", true},
              {"content", {{"application/json", {{"schema", {{"type", "object"}}}, {"example", example}}}}}}},
            {"responses", WithErrors({{"200", Ok("what `gpuplan cost " + job + " --json` prints", Ref(schema))}}, true)}}}};
}

json Schemas() {
  const json num = {{"type", "number"}};
  const json integer = {{"type", "integer"}};
  const json str = {{"type", "string"}};
  const json boolean = {{"type", "boolean"}};
  const json obj = {{"type", "object"}};
  const json arr = {{"type", "array"}};
  json s;
  s["Error"] = {{"type", "object"},
                {"required", {"error"}},
                {"properties",
                 {{"error",
                   {{"type", "object"},
                    {"required", {"code", "kind", "message", "field", "file", "line", "suggestions"}},
                    {"properties",
                     {{"code", integer},
                      {"kind", str},
                      {"message", str},
                      {"field", {{"type", "string"}, {"nullable", true}}},
                      {"file", {{"type", "string"}, {"nullable", true}}},
                      {"line", {{"type", "integer"}, {"nullable", true}}},
                      {"suggestions", {{"type", "array"}, {"items", str}}}}}}}}}};
  s["Health"] = {{"type", "object"}, {"required", {"status"}}, {"properties", {{"status", str}}}};
  s["Session"] = {{"type", "object"},
                  {"required", {"session", "token"}},
                  {"properties", {{"session", str}, {"token", boolean}}}};
  s["Gpu"] = {{"type", "object"},
              {"required", {"name", "memory_bytes"}},
              {"properties", {{"name", str}, {"memory_bytes", integer}}}};
  s["Gpus"] = {{"type", "array"}, {"items", Ref("Gpu")}};
  s["Model"] = {{"type", "object"},
                {"required", {"name", "params_total", "params_active"}},
                {"properties", {{"name", str}, {"params_total", integer}, {"params_active", integer}}}};
  s["Models"] = {{"type", "array"}, {"items", Ref("Model")}};
  s["Framework"] = {{"type", "object"},
                    {"required", {"name", "version", "id", "default", "kind", "description", "kv_rule", "kv_fraction",
                                  "kv_fraction_rule", "kv_block_tokens", "gguf"}},
                    {"properties",
                     {{"name", str}, {"version", {{"type", "string"}, {"nullable", true}}}, {"id", str},
                      {"default", boolean}, {"kind", str}, {"description", str},
                      {"kv_rule", {{"type", "string"}, {"nullable", true}}},
                      {"kv_fraction", {{"type", "number"}, {"nullable", true}}},
                      {"kv_fraction_rule", {{"type", "string"}, {"nullable", true}}},
                      {"kv_block_tokens", integer}, {"gguf", boolean},
                      {"sources", {{"type", "array"}, {"items", str}}}}}};
  s["Frameworks"] = {{"type", "object"},
                     {"required", {"frameworks", "gguf_types"}},
                     {"properties",
                      {{"frameworks", {{"type", "array"}, {"items", Ref("Framework")}}},
                       {"gguf_types",
                        {{"type", "array"},
                         {"items", {{"type", "object"},
                                    {"required", {"type", "bits"}},
                                    {"properties", {{"type", str}, {"bits", num}}}}}}}}}};
  s["Option"] = {{"type", "object"},
                 {"required", {"key", "flag", "kind", "default", "required", "values", "unit", "help"}},
                 {"properties",
                  {{"key", str}, {"flag", str}, {"kind", str}, {"default", str}, {"required", boolean},
                   {"values", {{"type", "array"}, {"items", str}}}, {"unit", str}, {"help", str}}}};
  s["Options"] = {{"type", "object"}, {"additionalProperties", {{"type", "array"}, {"items", Ref("Option")}}}};
  s["Memory"] = {{"type", "object"},
                 {"required", {"weights", "gradients", "optimizer", "activations", "kv_cache", "overhead", "total"}},
                 {"properties",
                  {{"weights", integer}, {"gradients", integer}, {"optimizer", integer}, {"activations", integer},
                   {"kv_cache", integer}, {"overhead", integer}, {"total", integer}}}};
  s["Fit"] = {{"type", "object"},
              {"description", "gpuplan fit --json: one card (memory_per_gpu, layout, fits, suggestions) or a "
                              "search (search, candidates)"},
              {"required", {"model", "fits"}},
              {"properties",
               {{"model", Ref("Model")},
                {"fits", {{"type", "boolean"}, {"nullable", true}}},
                {"memory_per_gpu", Ref("Memory")},
                {"gpu_memory", {{"type", "integer"}, {"nullable", true}}},
                {"layout", obj},
                {"workload", obj},
                {"suggestions", arr},
                {"search", obj},
                {"candidates", arr}}}};
  s["Usage"] = {{"type", "object"},
                {"required", {"start", "end", "hours", "gpu_hours", "peak_gpus"}},
                {"properties", {{"start", str}, {"end", str}, {"hours", integer}, {"gpu_hours", num}, {"peak_gpus", num}}}};
  s["Breakeven"] = {{"type", "object"},
                    {"required", {"currency", "month", "month_hours", "pairs", "series"}},
                    {"properties",
                     {{"currency", str}, {"month", str}, {"month_hours", integer}, {"pairs", arr}, {"series", arr}}}};
  s["Compare"] = {{"type", "object"},
                  {"required", {"currency", "usage", "strategies"}},
                  {"properties", {{"currency", str}, {"usage", Ref("Usage")}, {"strategies", obj}}}};
  s["Optimize"] = {{"type", "object"},
                   {"description", "the cheapest plan's keys at the top, with the usage, the pure strategies' "
                                   "totals, the savings and the +-20% plans"},
                   {"required", {"currency", "usage", "feasible", "total_cost", "reserved", "pure_strategies", "savings"}},
                   {"properties",
                    {{"currency", str}, {"usage", Ref("Usage")}, {"feasible", boolean}, {"total_cost", num},
                     {"reserved", arr}, {"pure_strategies", {{"type", "object"}, {"additionalProperties", num}}},
                     {"savings", obj}}}};
  s["Tco"] = {{"type", "object"},
              {"required", {"currency", "horizon_months", "buy", "rent", "cheaper", "months"}},
              {"properties",
               {{"currency", str}, {"horizon_months", num}, {"buy", obj}, {"rent", obj}, {"cheaper", str},
                {"months", arr}}}};
  s["MeterGroup"] = {{"type", "object"},
                     {"required", {"key", "observed_hours", "busy_hours", "idle_hours"}},
                     {"properties",
                      {{"key", str}, {"observed_hours", num}, {"busy_hours", num}, {"idle_hours", num}}}};
  s["MeterReport"] = {{"type", "object"},
                      {"required", {"groups", "total"}},
                      {"properties", {{"groups", {{"type", "array"}, {"items", Ref("MeterGroup")}}},
                                      {"total", Ref("MeterGroup")}}}};
  s["MeterSlot"] = {{"type", "object"},
                    {"required", {"from", "to", "total"}},
                    {"properties", {{"from", str}, {"to", str}, {"total", Ref("MeterGroup")}}}};
  s["MeterTimeline"] = {{"type", "object"},
                        {"description", "gpuplan meter timeline --json: the range, then per hour or day of it the "
                                        "total of `gpuplan meter report --from SLOT --to SLOT_END --json`"},
                        {"required", {"from", "to", "utc_offset", "step", "priced", "currency", "slots"}},
                        {"properties",
                         {{"from", str}, {"to", str}, {"utc_offset", str}, {"step", str}, {"priced", boolean},
                          {"currency", {{"type", "string"}, {"nullable", true}}},
                          {"slots", {{"type", "array"}, {"items", Ref("MeterSlot")}}}}}};
  const json money = {{"type", "object"},
                      {"nullable", true},
                      {"required", {"amount", "currency"}},
                      {"properties", {{"amount", num}, {"currency", str}}}};
  s["Alert"] = {{"type", "object"},
                {"required", {"kind", "severity", "gpu", "since", "at", "since_ms", "at_ms", "minutes",
                              "money_per_hour", "money", "summary", "repeat"}},
                {"properties",
                 {{"kind", str}, {"severity", str}, {"gpu", {{"type", "integer"}, {"nullable", true}}},
                  {"since", str}, {"at", str}, {"since_ms", integer}, {"at_ms", integer}, {"minutes", num},
                  {"money_per_hour", money}, {"money", money}, {"summary", str}, {"repeat", boolean}}}};
  s["MeterAlerts"] = {{"type", "object"},
                      {"description", "gpuplan meter alerts --json: the alerts raised in the range when the meter "
                                      "database is replayed through the rules (docs/meter-alerts.md)"},
                      {"required", {"from", "to", "utc_offset", "offer", "rules", "counts", "alerts", "notes"}},
                      {"properties",
                       {{"from", str}, {"to", str}, {"utc_offset", str},
                        {"offer", {{"type", "string"}, {"nullable", true}}},
                        {"rules", obj},
                        {"replayed_from", {{"type", "string"}, {"nullable", true}}},
                        {"raw_from", {{"type", "string"}, {"nullable", true}}},
                        {"counts", {{"type", "object"}, {"additionalProperties", integer}}},
                        {"alerts", {{"type", "array"}, {"items", Ref("Alert")}}},
                        {"notes", {{"type", "array"}, {"items", str}}}}}};
  s["ReportSummary"] = {{"type", "object"},
                        {"required", {"name", "error"}},
                        {"properties",
                         {{"name", str},
                          {"error", {{"type", "string"}, {"nullable", true}}},
                          {"verdict", str},
                          {"exit_code", integer},
                          {"started", str},
                          {"finished", str},
                          {"expect", str},
                          {"expected_card", str},
                          {"tests", integer}}}};
  s["Reports"] = {{"type", "object"},
                  {"required", {"reports", "skipped"}},
                  {"properties",
                   {{"reports", {{"type", "array"}, {"items", Ref("ReportSummary")}}},
                    {"skipped",
                     {{"type", "array"},
                      {"description", "files of the folder not read: a name that is not UTF-8, a link out of the folder"},
                      {"items", {{"type", "object"}, {"properties", {{"name", str}, {"why", str}}}}}}}}}};
  s["CheckReport"] = {{"type", "object"},
                      {"description", "a check report, as `gpuplan check --json` writes it (docs/check.md §6)"},
                      {"required", {"verdict", "tests"}},
                      {"properties", {{"verdict", str}, {"tests", arr}, {"expect", str}}}};
  s["ComparedMachine"] = {{"type", "object"},
                          {"required", {"file", "label", "card", "gpus", "verdict"}},
                          {"properties",
                           {{"file", str}, {"label", str}, {"card", str}, {"gpus", integer}, {"verdict", str},
                            {"price_per_hour", {{"type", "number"}, {"nullable", true}}},
                            {"rank", {{"type", "integer"}, {"nullable", true}}}}}};
  s["Comparison"] = {{"type", "object"},
                     {"description", "what `gpuplan check compare REPORT... --json -` prints (docs/check.md §7)"},
                     {"required", {"machines", "rows", "rank_basis", "notes"}},
                     {"properties",
                      {{"currency", {{"type", "string"}, {"nullable", true}}},
                       {"rank_basis", str},
                       {"notes", {{"type", "array"}, {"items", str}}},
                       {"machines", {{"type", "array"}, {"items", Ref("ComparedMachine")}}},
                       {"rows", arr}}}};
  return s;
}

}  // namespace

json OpenApiDocument() {
  json paths;
  paths["/health"] = {{"get",
                       {{"summary", "the server is up (no token needed)"},
                        {"responses", {{"200", Ok("up", Ref("Health"))}}}}}};
  const json session_body = {{"required", true},
                             {"content", {{"application/json", {{"schema", {{"type", "object"}}}, {"example", json::object()}}}}}};
  paths["/api/session"] = {
      {"post",
       {{"summary", "keep the bearer token in an HttpOnly, SameSite=Strict cookie (the page opened as /#token=...)"},
        {"requestBody", session_body},
        {"responses", WithErrors({{"200", Ok("the cookie is set (token mode)", Ref("Session"))}}, true)}}}};
  paths["/api/gpus"] = {{"get",
                         {{"summary", "the GPU catalog, as gpuplan gpus --json"},
                          {"responses", WithErrors({{"200", Ok("the cards", Ref("Gpus"))}}, false)}}}};
  paths["/api/models"] = {{"get",
                           {{"summary", "the model presets, as gpuplan models --json"},
                            {"responses", WithErrors({{"200", Ok("the presets", Ref("Models"))}}, false)}}}};
  paths["/api/frameworks"] = {
      {"get",
       {{"summary", "the framework profiles of fit --framework and the GGUF types, as gpuplan frameworks --json"},
        {"responses", WithErrors({{"200", Ok("the profiles", Ref("Frameworks"))}}, false)}}}};
  const json shipped_offers = {
      {"type", "array"},
      {"items",
       {{"type", "object"},
        {"required", {"name", "text"}},
        {"properties", {{"name", {{"type", "string"}}}, {"text", {{"type", "string"}}}}}}}};
  paths["/api/offers"] = {
      {"get",
       {{"summary", "the example offers files shipped in the data folder (offers/*.yaml): name and YAML text"},
        {"responses", WithErrors({{"200", Ok("the shipped offers", shipped_offers)}}, false)}}}};
  const json meter_offers = {
      {"type", "array"},
      {"items",
       {{"type", "object"},
        {"required", {"id", "gpu", "mode", "price", "currency"}},
        {"properties",
         {{"id", {{"type", "string"}}},
          {"gpu", {{"type", "string"}}},
          {"mode", {{"type", "string"}}},
          {"price", {{"type", "number"}}},
          {"currency", {{"type", "string"}}}}}}}};
  paths["/api/meter/offers"] = {
      {"get",
       {{"summary", "the offers of the server's --meter-offers file (empty without one), for choosing the offer a "
                    "report prices by"},
        {"responses", WithErrors({{"200", Ok("the offers", meter_offers)}}, false)}}}};
  paths["/api/options"] = {{"get",
                            {{"summary", "every job's options: the JSON keys of the request bodies"},
                             {"responses", WithErrors({{"200", Ok("per job, its options", Ref("Options"))}}, false)}}}};
  paths["/api/fit"] = {
      {"post",
       {{"summary", "gpuplan fit --json"},
        {"description", "The body: fit's options by JSON key (GET /api/options). `model` names a preset; "
                        "`config` (a config.json as text or object) sizes a model that is not one; `offers` is "
                        "an offers file's text."},
        {"requestBody",
         {{"required", true},
          {"content",
           {{"application/json",
             {{"schema", {{"type", "object"}}},
              {"example", {{"model", "Qwen2.5-7B"}, {"task", "lora"}, {"seq", 2048}, {"gpu", "A100 80GB SXM"}}}}}}}}},
        {"responses", WithErrors({{"200", Ok("the fit, fits or not", Ref("Fit"))}}, true)}}}};
  paths["/api/cost/breakeven"] =
      CostPath("breakeven", "hours per month at which two billing modes cost the same",
               {{"offers", kExampleOffers}, {"month", "2027-03"}}, "Breakeven");
  paths["/api/cost/compare"] = CostPath("compare", "every pure strategy's cost for the usage",
                                        {{"offers", kExampleOffers}, {"usage", kExampleUsage}}, "Compare");
  paths["/api/cost/optimize"] = CostPath("optimize", "the cheapest mix of reserved, on-demand and spot",
                                         {{"offers", kExampleOffers}, {"usage", kExampleUsage}}, "Optimize");
  paths["/api/cost/tco"] = CostPath("tco", "buy versus rent",
                                    {{"offers", kExampleOffers}, {"hours_per_month", 300}, {"month", "2027-03"}}, "Tco");
  paths["/api/meter/report"] = {
      {"get",
       {{"summary", "gpuplan meter report --json over the server's --meter-db"},
        {"parameters",
         QueryOf(MeterReportOptionTable(), {{"from", "2026-03-01"}, {"to", "2026-03-02"}, {"by", "gpu"}})},
        {"responses", WithErrors({{"200", Ok("the report", Ref("MeterReport"))}}, false)}}}};
  paths["/api/meter/export"] = {
      {"get",
       {{"summary", "gpuplan meter export: the measured use as the usage CSV gpuplan cost reads"},
        {"parameters",
         QueryOf(MeterExportOptionTable(), {{"from", "2026-03-01"}, {"to", "2026-03-02"}, {"basis", "busy"}})},
        {"responses",
         WithErrors({{"200", {{"description", "timestamp,gpus"}, {"content", {{"text/csv", {{"schema", {{"type", "string"}}}}}}}}}},
                    false)}}}};
  paths["/api/meter/timeline"] = {
      {"get",
       {{"summary", "money and hours over time: gpuplan meter timeline --json over the server's --meter-db"},
        {"description", "Each slot's `total` is the `total` of `gpuplan meter report --from SLOT --to SLOT_END "
                        "--json` (at most 744 slots, from one read of the database)."},
        {"parameters",
         QueryOf(MeterTimelineOptionTable(), {{"from", "2026-03-01"}, {"to", "2026-03-02"}, {"step", "hour"}})},
        {"responses", WithErrors({{"200", Ok("the slots", Ref("MeterTimeline"))}}, false)}}}};
  paths["/api/meter/alerts"] = {
      {"get",
       {{"summary", "gpuplan meter alerts --json: the alerts of the range, the server's --meter-db replayed"},
        {"description", "The rules are the server's --meter-alerts file's (else the defaults), the GPU-hour price "
                        "and the budget's projection its --meter-offers'."},
        {"parameters",
         QueryOf(MeterAlertsOptionTable(), {{"from", "2026-03-01"}, {"to", "2026-03-02"}})},
        {"responses", WithErrors({{"200", Ok("the alerts", Ref("MeterAlerts"))}}, false)}}}};
  paths["/api/check/compare"] = {
      {"post",
       {{"summary", "gpuplan check compare --json over reports of the server's --reports folder"},
        {"description", "The body names two or more reports of the folder, as GET /api/check/reports lists them."},
        {"requestBody",
         {{"required", true},
          {"content",
           {{"application/json",
             {{"schema", {{"type", "object"}}},
              {"example", {{"reports", {"rtx4090.json", "h100x2-burn-in.json"}}}}}}}}}},
        {"responses", WithErrors({{"200", Ok("the reports side by side", Ref("Comparison"))}}, true)}}}};
  paths["/api/check/reports"] = {{"get",
                                  {{"summary", "the check reports in the server's --reports folder"},
                                   {"responses", WithErrors({{"200", Ok("one line per file", Ref("Reports"))}}, false)}}}};
  paths["/api/check/reports/{name}"] = {
      {"get",
       {{"summary", "one check report"},
        {"parameters",
         {{{"name", "name"}, {"in", "path"}, {"required", true}, {"schema", {{"type", "string"}}},
           {"example", "rtx4090.json"}}}},
        {"responses", WithErrors({{"200", Ok("the report", Ref("CheckReport"))}, {"404", Error("no such report")}}, false)}}}};
  const json document_schema = {{"type", "object"}, {"required", {"openapi", "paths"}}};
  paths["/api/openapi.json"] = {
      {"get", {{"summary", "this document"}, {"responses", {{"200", Ok("OpenAPI 3.0", document_schema)}}}}}};
  return {{"openapi", "3.0.3"},
          {"info",
           {{"title", "gpuplan serve"},
            {"version", "1"},
            {"description", "The JSON API of gpuplan serve: the same requests and answers as the CLI's --json. "
                            "Errors: {\"error\": {code, kind, message, field, file, line, suggestions}}."}}},
          {"components",
           {{"schemas", Schemas()},
            {"securitySchemes", {{"bearer", {{"type", "http"}, {"scheme", "bearer"}}}}}}},
          {"security", json::array({json::object({{"bearer", json::array()}}), json::object()})},
          {"paths", paths}};
}

}  // namespace gpuplan
