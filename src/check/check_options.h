// The options of `gpuplan check` (and of `check compare` / `check merge`), one table per job
// (read/options.h): flag, JSON key, help, unit, validation and the request field each sets.
// The CLI registers its flags from these tables and docs/cli.md's check tables are generated
// from them (the serve API runs no check: its check routes read and compare reports, without
// these tables). Defaults are the requests' own (check/check_request.h, check/compare.h).
#pragma once

#include "check/check_request.h"
#include "check/compare.h"
#include "read/options.h"

namespace gpuplan {

const OptionTable<CheckRequest>& CheckOptionTable();
const OptionTable<CompareReportsRequest>& CompareReportsOptionTable();
const OptionTable<MergeReportsRequest>& MergeReportsOptionTable();

}  // namespace gpuplan
