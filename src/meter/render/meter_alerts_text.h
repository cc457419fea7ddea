// Text form of `gpuplan meter alerts` and `gpuplan meter timeline` (meter/alert_replay.h,
// meter/report.h): what the CLI prints without --json (the JSON forms are meter_json.h). An
// alert is one line: its time in the zone, its severity and the summary the agent logs live
// ("alert: SUMMARY"), so the two can be compared line by line; with Chinese text (--lang zh) the
// summaries and notes go through the catalogue's templates (SayMessage), the rest stays English.
#pragma once

#include <ostream>

#include "meter/alert_replay.h"
#include "meter/report.h"

namespace gpuplan {

void MeterAlertsToText(std::ostream& os, const MeterAlerts& a);
void MeterTimelineToText(std::ostream& os, const MeterTimeline& t);

}  // namespace gpuplan
