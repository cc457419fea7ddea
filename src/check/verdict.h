// The verdict helpers of src/check: the one factory of results (Make) and the setters that give a
// result its status together with its evidence and advice, by hand or against a threshold.
#pragma once

#include <string>

#include "check/report.h"

namespace gpuplan {

// A result of test `name` on GPU `gpu` (-1: the host or the whole machine) of `node`; SKIP until judged.
CheckResult Make(const std::string& name, int gpu, const std::string& node);

// PASS; `evidence` replaces the result's when not empty.
void Pass(CheckResult& r, const std::string& evidence = {});
// SKIP with its reason as the evidence.
void Skip(CheckResult& r, const std::string& evidence);
// WARN or FAIL with the next step; `advice` replaces the result's when not empty (the evidence
// is what the result already says).
void Warn(CheckResult& r, const std::string& advice = {});
void Fail(CheckResult& r, const std::string& advice = {});
// ERROR: the test itself could not run; its evidence and next step.
void Error(CheckResult& r, const std::string& evidence, const std::string& advice);
// `status` (for the few verdicts that carry one over from elsewhere) with `advice` when not empty.
void SetStatus(CheckResult& r, CheckStatus status, const std::string& advice = {});

// PASS when `value` >= `threshold` (exactly at it passes), else `below` (FAIL unless told) with
// `advice` (a NaN value does not pass). Returns whether it passed.
bool AtLeast(CheckResult& r, double value, double threshold, CheckStatus below = CheckStatus::kFail,
             const std::string& advice = {});
// PASS when `value` <= `limit` (exactly at it passes), else `above` (WARN unless told) with
// `advice` (a NaN value does not pass). Returns whether it passed.
bool AtMost(CheckResult& r, double value, double limit, CheckStatus above = CheckStatus::kWarn,
            const std::string& advice = {});
// `measured` as a share of `expected` (0 when expected <= 0): FAIL below `fail_share`, WARN below
// `warn_share`, else PASS (a share exactly at a threshold is at or above it); `advice` for WARN
// and FAIL. Returns the share.
double Fraction(CheckResult& r, double measured, double expected, double warn_share, double fail_share,
                const std::string& advice = {});

}  // namespace gpuplan
