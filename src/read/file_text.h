// Reading a whole file into memory; the first step of every reader that takes a path.
#pragma once

#include <optional>
#include <string>

namespace gpuplan {

// Reads a whole file (binary, no newline translation); InputError naming the path when it
// cannot be opened.
std::string ReadFileText(const std::string& path);
// The same, for files that may be absent or unreadable by design (/proc entries of a process
// that has exited, optional system files): nullopt instead of an error.
std::optional<std::string> TryReadFileText(const std::string& path);

}  // namespace gpuplan
