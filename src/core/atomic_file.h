// Writing a file so that a reader (or a crash) never sees it half-written: the text goes to a
// temporary file in the same folder, is synced, and replaces the file by rename(2), which is
// atomic within one file system.
#pragma once

#include <string>

namespace gpuplan {

// Throws EnvironmentError "cannot write <what> <path>: <step>: <reason>" and leaves no
// temporary file behind.
void WriteFileAtomically(const std::string& path, const std::string& text, const std::string& what = "file");

}  // namespace gpuplan
