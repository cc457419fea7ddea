// JSON of `gpuplan check` results (docs/check.md §6 defines every key): the report file that
// --json writes after every test, and the compare / merge results. ReportFromJson reads a
// report back (check compare / merge, the serve API's report viewer); it reads the lossless
// parts (`nodes`, `tests`, `host`, ...) and ignores the derived ones (`gpus`, `exit_code`).
#pragma once

#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "check/compare.h"
#include "check/report.h"

namespace gpuplan {

inline constexpr const char* kCheckReportSchema = "gpuplan-check-report/1";

nlohmann::json CheckResultToJson(const CheckResult& r);
nlohmann::json HostToJson(const HostInfo& h);
nlohmann::json CheckReportToJson(const CheckReport& r);
// Bad input -> InputError naming `file` and the key path ("tests[3].status").
CheckReport ReportFromJson(const nlohmann::json& j, const std::string& file);
// Reads and parses a report file (InputError on a missing file or bad JSON, with the line).
NamedReport LoadReport(const std::string& path);

nlohmann::json ComparisonToJson(const ComparisonResult& c);
nlohmann::json MergeToJson(const MergeResult& m);
// Writes MergeToJson(m).dump(2) + "\n" without building the whole tree (a 1,000-node merge).
void WriteMergeJson(const MergeResult& m, std::ostream& out);

}  // namespace gpuplan
