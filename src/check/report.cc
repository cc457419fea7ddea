#include "check/report.h"

#include <utility>

#include "core/error.h"

namespace gpuplan {

const char* ToString(CheckStatus s) {
  switch (s) {
    case CheckStatus::kPass: return "PASS";
    case CheckStatus::kWarn: return "WARN";
    case CheckStatus::kFail: return "FAIL";
    case CheckStatus::kSkip: return "SKIP";
    case CheckStatus::kError: return "ERROR";
  }
  return "ERROR";
}

int StatusRank(CheckStatus s) {
  switch (s) {
    case CheckStatus::kPass: return 0;
    case CheckStatus::kSkip: return 1;
    case CheckStatus::kWarn: return 2;
    case CheckStatus::kFail: return 3;
    case CheckStatus::kError: return 4;
  }
  return 4;
}

CheckStatus Worse(CheckStatus a, CheckStatus b) { return StatusRank(a) >= StatusRank(b) ? a : b; }

void CheckReport::Add(CheckResult r) {
  const CheckStatus s = r.status == CheckStatus::kSkip ? CheckStatus::kPass : r.status;
  verdict = Worse(verdict, s);
  tests.push_back(std::move(r));
}

int CheckReport::ExitCode() const {
  if (verdict == CheckStatus::kError || environment_problem) {
    return kExitEnvironment;
  }
  return verdict == CheckStatus::kFail ? kExitNegative : kExitOk;
}

}  // namespace gpuplan
