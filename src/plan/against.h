// `gpuplan plan --against METER_DB` (docs/plan.md §7): the plan held against what was measured.
// Per month with measurements, the GPU-hours the plan's jobs hold against the GPU-hours the GPUs
// were busy (meter export's busy basis: the demand), over the hours both cover; and for a month
// measured whole on a plan of one card, the cheapest rental of the measured use (the optimiser on
// that card's offers) against the plan's. Says when to re-plan: use off by more than `share`, or
// the measured use served cheapest by another reserved mix.
#pragma once

#include "catalog/offer.h"
#include "cost/optimizer.h"
#include "cost/usage.h"
#include "plan/plan.h"

namespace gpuplan {

// `measured`: the hourly busy GPUs (RunMeterExport's trace, in the offers' zone).
PlanComparison ComparePlanWithMeasured(const PlanResult& plan, const UsageTrace& measured, const OfferSet& offers,
                                       double share);

}  // namespace gpuplan
