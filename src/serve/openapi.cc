// The OpenAPI 3.0 document of the serve API, its paths generated from the route table (routes.h:
// ApiRoutes). Each operation carries an example request
// (parameters' `example`, the body's `example`): tests/serve calls every operation with it and
// validates the answer against the schema here, so the document cannot drift from the server.
#include "serve/api.h"

#include <algorithm>
#include <cctype>
#include <string>

#include "serve/routes.h"

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

// A GET route's query parameters, from the options table its handler reads the query with
// (MeterQuery in api.cc) as GET /api/options lists it: every key but the server's own files
// (kServerFileKeys), each with the table's help and choices, so the document cannot drift from
// what the server takes. The route's examples give the example value per key.
json QueryOf(const ApiRoute& route) {
  json out = json::array();
  for (const auto& o : route.option_list()) {
    const std::string key = o["key"];
    if (std::find(kServerFileKeys.begin(), kServerFileKeys.end(), key) != kServerFileKeys.end()) {
      continue;
    }
    json q = Query(key, o["help"], route.examples.count(key) != 0 ? route.examples.at(key) : "");
    if (!o["values"].empty()) {
      q["schema"]["enum"] = o["values"];
    }
    out.push_back(std::move(q));
  }
  return out;
}

// One route's operation: its summary, parameters (the {name} segment of its path, the query of
// its options table), body and answers, all from the route table.
json Operation(const ApiRoute& route) {
  json op = {{"summary", route.summary}};
  if (!route.description.empty()) {
    op["description"] = route.description;
  }
  json parameters = json::array();
  const auto open = route.path.find('{');
  if (open != std::string::npos) {
    const std::string name = route.path.substr(open + 1, route.path.find('}', open) - open - 1);
    json p = {{"name", name}, {"in", "path"}, {"required", true}, {"schema", {{"type", "string"}}}};
    if (route.examples.count(name) != 0) {
      p["example"] = route.examples.at(name);
    }
    parameters.push_back(std::move(p));
  }
  const bool post = route.method == "POST";
  if (!post && route.option_list != nullptr) {
    for (auto& q : QueryOf(route)) {
      parameters.push_back(std::move(q));
    }
  }
  if (!parameters.empty()) {
    op["parameters"] = parameters;
  }
  if (post) {
    op["requestBody"] = {
        {"required", true},
        {"content", {{"application/json", {{"schema", {{"type", "object"}}}, {"example", route.body_example}}}}}};
  }
  json ok = route.schema.empty()
                ? json{{"description", route.answer}, {"content", {{"text/csv", {{"schema", {{"type", "string"}}}}}}}}
                : Ok(route.answer, Ref(route.schema));
  json responses = {{"200", ok}};
  for (const auto& [status, what] : route.more_answers) {
    responses[status] = Error(what);
  }
  op["responses"] = route.is_public ? responses : WithErrors(responses, post);
  return op;
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
                                  "kv_fraction_rule", "kv_block_tokens", "kv_overflow", "gguf"}},
                    {"properties",
                     {{"name", str}, {"version", {{"type", "string"}, {"nullable", true}}}, {"id", str},
                      {"default", boolean}, {"kind", str}, {"description", str},
                      {"kv_rule", {{"type", "string"}, {"nullable", true}}},
                      {"kv_fraction", {{"type", "number"}, {"nullable", true}}},
                      {"kv_fraction_rule", {{"type", "string"}, {"nullable", true}}},
                      {"kv_block_tokens", integer},
                      {"kv_overflow", {{"type", "string"}, {"nullable", true}}}, {"gguf", boolean},
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
                {"accuracy",
                 {{"type", "object"},
                  {"nullable", true},
                  {"description", "how far the time model came from published runs (data/accuracy.yaml): "
                                  "kind (training, training_moe: a mixture-of-experts model, inference), gpu, "
                                  "on_gpu {rows, median_abs_error, worst_error} (null: no run on this "
                                  "card was checked), all {...}, gpus_checked, source, worst_run_time_ratio (the "
                                  "worst checked run's time over the modelled time where it was off by half or more, "
                                  "else null); null with --mfu"}}},
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
  s["Plan"] = {{"type", "object"},
               {"required", {"feasible", "currency", "total", "months", "alternatives", "checks"}},
               {"properties",
                {{"feasible", boolean}, {"currency", str}, {"total", {{"type", "number"}, {"nullable", true}}},
                 {"months", arr}, {"alternatives", arr}, {"checks", arr}, {"accuracy", obj}}}};
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
  s["ShippedOffers"] = {{"type", "array"},
                       {"items",
                        {{"type", "object"},
                         {"required", {"name", "text"}},
                         {"properties", {{"name", str}, {"text", str}}}}}};
  s["MeterOffers"] = {{"type", "array"},
                     {"items",
                      {{"type", "object"},
                       {"required", {"id", "gpu", "mode", "price", "currency"}},
                       {"properties", {{"id", str}, {"gpu", str}, {"mode", str}, {"price", num}, {"currency", str}}}}}};
  s["OpenApiDocument"] = {{"type", "object"}, {"required", {"openapi", "paths"}}};
  return s;
}

}  // namespace

json OpenApiDocument() {
  json paths = json::object();
  for (const ApiRoute& route : ApiRoutes()) {
    std::string method = route.method;
    std::transform(method.begin(), method.end(), method.begin(), [](unsigned char c) { return std::tolower(c); });
    paths[route.path][method] = Operation(route);
  }
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
