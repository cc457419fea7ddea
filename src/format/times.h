// Times as text, written once: the ISO 8601 UTC "now" of reports and watch results.
#pragma once

#include <string>

namespace gpuplan {

// Now in UTC to the second: "2026-12-03T21:15:00Z".
std::string UtcNowIso();

}  // namespace gpuplan
