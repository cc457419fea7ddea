// Reading a whole file into memory; the first step of every reader that takes a path.
#pragma once

#include <string>

namespace gpuplan {

// Reads a whole file (binary, no newline translation); InputError naming the path when it
// cannot be opened.
std::string ReadFileText(const std::string& path);

}  // namespace gpuplan
