// JSON form of `gpuplan meter report`, `timeline` and `alerts` (meter/report.h, alert_replay.h): the one mapping used by the CLI (--json)
// and the server. Keys are documented in docs/meter.md ("Report JSON"); hours are card-hours,
// money is in `currency` (null when the report was not priced with an offer).
#pragma once

#include <nlohmann/json.hpp>

#include "meter/alert_replay.h"
#include "meter/observed.h"
#include "meter/report.h"

namespace gpuplan {

nlohmann::json MeterGroupToJson(const MeterGroup& g, bool priced);
nlohmann::json MonthProjectionToJson(const MonthProjection& p, const Zone& zone);
nlohmann::json MeterReportToJson(const MeterReport& r);
// `gpuplan meter timeline --json` (GET /api/meter/timeline): the range, then per slot its
// bounds and total (MeterGroupToJson).
nlohmann::json MeterTimelineToJson(const MeterTimeline& t);
// One alert with the keys of the generic webhook body (docs/meter-alerts.md) and its times as
// text in the zone; `gpuplan meter alerts --json` (GET /api/meter/alerts) lists them.
nlohmann::json AlertToJson(const Alert& a, const Zone& zone);
nlohmann::json MeterAlertsToJson(const MeterAlerts& a);

}  // namespace gpuplan
