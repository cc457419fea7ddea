// Spans of time as text (instants and wall-clock times are read/time_text.h's).
#pragma once

#include <string>

namespace gpuplan {

// A span of minutes: whole minutes below two hours ("45 min"), then hours to one decimal
// ("2.5 h").
std::string FormatMinutes(double minutes);

}  // namespace gpuplan
