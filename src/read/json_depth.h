// A nesting limit and unique names for every JSON input gpuplan reads (files, trace lines, worker
// lines, request bodies): docs/architecture.md "Input limits".
#pragma once

#include <string>

namespace gpuplan {

// The deepest nesting of arrays and objects any JSON input may have. No gpuplan file nests
// deeper than about 6; nlohmann's parser keeps its own stack, but a value nested 100,000 deep
// would still make every recursive walk of it (dump, compare, copy) overflow the stack.
inline constexpr int kMaxJsonDepth = 128;

// Throws InputError (file, `line`, field "(nesting)") when `text` nests arrays and objects deeper
// than kMaxJsonDepth, and (file, the line of the second name or `line` where given, field the
// name) when an object gives one name twice (RFC 8259 §4 leaves which value counts to the
// reader). Reads the text once with nlohmann's SAX interface (no tree is built, no recursion); a
// syntax error is left for the parse that follows to report.
void CheckJsonInput(const std::string& text, const std::string& file, int line = 0);

}  // namespace gpuplan
