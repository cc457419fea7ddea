// The options of the cost jobs (breakeven, compare, optimize, tco), one table per job
// (read/options.h): flag, JSON key, help, unit, validation and the request field each sets.
// The CLI registers each subcommand's flags from its table, the JSON API reads a request object
// by its keys (ReadJsonOptions; the values are checked by CheckCostRequest), and docs/cli.md's
// cost tables are generated from them (tests/unit/options_table_test.cc). Defaults are the requests' own
// (cost/requests.h).
#pragma once

#include "cost/requests.h"
#include "read/options.h"

namespace gpuplan {

const OptionTable<BreakevenRequest>& BreakevenOptionTable();
const OptionTable<CompareRequest>& CompareOptionTable();
const OptionTable<OptimizeRequest>& OptimizeOptionTable();
const OptionTable<TcoRequest>& TcoOptionTable();

// The job's table checks of the options given (r.given), in the one order every front end
// reports them: an error in the offers file (SelectOffers) before the table's. Throws InputError
// naming the option by its key. Each Run* checks the same first; the serve API calls these
// before it waits for the solver, so a bad request gets its error at once.
void CheckCostRequest(const BreakevenRequest& r, const GpuCatalog& catalog);
void CheckCostRequest(const CompareRequest& r, const GpuCatalog& catalog);
void CheckCostRequest(const OptimizeRequest& r, const GpuCatalog& catalog);
void CheckCostRequest(const TcoRequest& r, const GpuCatalog& catalog);

}  // namespace gpuplan
