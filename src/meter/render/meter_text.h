// Text form of `gpuplan meter report` (meter/report.h): what the CLI prints without --json (the
// JSON form is meter_json.h). A table of the groups and the total (through Table, table.h), the
// idle money named per GPU, the month's projection and the notes.
#pragma once

#include <ostream>

#include "meter/report.h"

namespace gpuplan {

void MeterReportToText(std::ostream& os, const MeterReport& r);

}  // namespace gpuplan
