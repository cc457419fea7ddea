// The options of `gpuplan meter` (report, export, timeline, alerts; run and record), one table per job
// (read/options.h): flag, JSON key, help, unit, validation and the request field each sets.
// The CLI registers its flags from these tables, the serve API applies a JSON object with
// ApplyJsonOptions, and docs/cli.md's meter tables are generated from them. Defaults are the
// requests' own (meter/report.h, meter/agent.h).
#pragma once

#include "meter/agent.h"
#include "meter/alert_replay.h"
#include "meter/watch.h"
#include "meter/report.h"
#include "read/options.h"

namespace gpuplan {

const OptionTable<MeterReportRequest>& MeterReportOptionTable();
const OptionTable<MeterExportRequest>& MeterExportOptionTable();
const OptionTable<MeterTimelineRequest>& MeterTimelineOptionTable();
const OptionTable<MeterAlertsRequest>& MeterAlertsOptionTable();
const OptionTable<MeterAgentRequest>& MeterRunOptionTable();
const OptionTable<MeterRecordRequest>& MeterRecordOptionTable();
const OptionTable<WatchRequest>& MeterWatchOptionTable();

}  // namespace gpuplan
