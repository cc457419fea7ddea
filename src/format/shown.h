// Text that came from outside (a capture's product name, a process's command line, a user name)
// as a terminal should get it: one escaper for every text renderer (check, meter), so a string
// an input controls cannot move the cursor, rewrite earlier lines or retitle the terminal, and
// a 10 MB command line does not print a 10 MB row. JSON writers do not use it (JSON escapes).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace gpuplan {

// The most bytes of one echoed piece (a name, a command, an evidence line) in a text report.
inline constexpr std::size_t kMaxShownBytes = 2000;

// `s` with its control characters written as escapes, never raw (ESC, CR, BEL, NUL, DEL ->
// \x1b, \x0d, \x07, \x00, \x7f; the C1 controls U+0080-U+009F, which some terminals obey, ->
// \u009b), and at most `max_bytes` of it, cut at a UTF-8 character boundary, followed by
// "... (N bytes in all)" when it was cut.
std::string Shown(std::string_view s, std::size_t max_bytes = kMaxShownBytes);

}  // namespace gpuplan
