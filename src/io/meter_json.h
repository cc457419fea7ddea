// JSON form of `gpuplan meter report` (meter/report.h): the one mapping used by the CLI (--json)
// and the server. Keys are documented in docs/meter.md ("Report JSON"); hours are card-hours,
// money is in `currency` (null when the report was not priced with an offer).
#pragma once

#include <nlohmann/json.hpp>

#include "meter/observed.h"
#include "meter/report.h"

namespace gpuplan {

nlohmann::json MeterGroupToJson(const MeterGroup& g, bool priced);
nlohmann::json MonthProjectionToJson(const MonthProjection& p, int utc_offset_minutes);
nlohmann::json MeterReportToJson(const MeterReport& r);

}  // namespace gpuplan
