// Writing a file so that a reader (or a crash) never sees it half-written: the text goes to a
// temporary file in the same folder, is synced, and replaces the file by rename(2), which is
// atomic within one file system.
#pragma once

#include <string>

namespace gpuplan {

// Throws EnvironmentError "cannot write <what> <path>: <step>: <reason>" and leaves no
// temporary file behind.
void WriteFileAtomically(const std::string& path, const std::string& text, const std::string& what = "file");

// Before work whose result goes to `path` (a command that cannot be run twice): throws the
// EnvironmentError WriteFileAtomically would, "cannot write <what> <path>: <reason>", when its
// folder is missing or not writable or the path is a folder, by creating and removing the
// temporary file WriteFileAtomically would write.
void CheckFileWritable(const std::string& path, const std::string& what = "file");

}  // namespace gpuplan
