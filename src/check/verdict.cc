// The verdict helpers (check/verdict.h): Make, Pass/Skip/Warn/Fail/Error, AtLeast, AtMost, Fraction.
#include "check/verdict.h"

namespace gpuplan {

CheckResult Make(const std::string& name, int gpu, const std::string& node) {
  CheckResult r;
  r.name = name;
  r.gpu = gpu;
  r.node = node;
  return r;
}

void SetStatus(CheckResult& r, CheckStatus status, const std::string& advice) {
  r.status = status;
  if (!advice.empty()) {
    r.advice = advice;
  }
}

void Pass(CheckResult& r, const std::string& evidence) {
  r.status = CheckStatus::kPass;
  if (!evidence.empty()) {
    r.evidence = evidence;
  }
}

void Skip(CheckResult& r, const std::string& evidence) {
  r.status = CheckStatus::kSkip;
  r.evidence = evidence;
}

void Warn(CheckResult& r, const std::string& advice) { SetStatus(r, CheckStatus::kWarn, advice); }

void Fail(CheckResult& r, const std::string& advice) { SetStatus(r, CheckStatus::kFail, advice); }

void Error(CheckResult& r, const std::string& evidence, const std::string& advice) {
  r.status = CheckStatus::kError;
  r.evidence = evidence;
  r.advice = advice;
}

bool AtLeast(CheckResult& r, double value, double threshold, CheckStatus below, const std::string& advice) {
  const bool ok = value >= threshold;
  if (ok) {
    r.status = CheckStatus::kPass;
  } else {
    SetStatus(r, below, advice);
  }
  return ok;
}

bool AtMost(CheckResult& r, double value, double limit, CheckStatus above, const std::string& advice) {
  const bool ok = value <= limit;
  if (ok) {
    r.status = CheckStatus::kPass;
  } else {
    SetStatus(r, above, advice);
  }
  return ok;
}

double Fraction(CheckResult& r, double measured, double expected, double warn_share, double fail_share,
                const std::string& advice) {
  const double share = expected > 0 ? measured / expected : 0;
  if (share < fail_share) {
    Fail(r, advice);
  } else if (share < warn_share) {
    Warn(r, advice);
  } else {
    r.status = CheckStatus::kPass;
  }
  return share;
}

}  // namespace gpuplan
