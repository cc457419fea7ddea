// "A skip is a failure in CI" (docs/testing.md) for the unit tests: a test that needs a dependency
// scripts/install-deps.sh installs skips without it, except under GPUPLAN_CI=1 (.ci/run), where
// the skip is a failure naming what is missing. Skips for what CI legitimately lacks (a GPU, a
// device run's file) use GTEST_SKIP and are on tests/skip-allowlist.txt.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

namespace gpuplan::test {
inline bool CiMode() {
  const char* ci = std::getenv("GPUPLAN_CI");
  return ci != nullptr && std::string(ci) == "1";
}
}  // namespace gpuplan::test

// Returns from the test: a skip, or a failure under GPUPLAN_CI=1.
#define GPUPLAN_SKIP_MISSING_DEPENDENCY(why)                                                               \
  do {                                                                                                     \
    if (::gpuplan::test::CiMode()) {                                                                       \
      GTEST_FAIL() << (why) << " (GPUPLAN_CI=1: scripts/install-deps.sh installs it, so its skip is a failure)"; \
    }                                                                                                      \
    GTEST_SKIP() << (why);                                                                                 \
  } while (0)
