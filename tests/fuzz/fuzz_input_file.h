// For fuzz targets whose parser reads a path: the input written to one scratch file per process.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace gpuplan::fuzz {

// Writes the input to <temp dir>/gpuplan-fuzz-<pid>-<name> (the same file for every input of
// this process, removed at exit) and returns its path.
inline std::string InputFile(const uint8_t* data, size_t size, const std::string& name) {
  static const std::string path = [&name] {
    const std::string p = (std::filesystem::temp_directory_path() /
                           ("gpuplan-fuzz-" + std::to_string(::getpid()) + "-" + name))
                              .string();
    static const std::string removed = p;
    std::atexit([] { std::remove(removed.c_str()); });
    return p;
  }();
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  out.close();
  if (!out) {
    std::abort();  // the scratch file itself failed: no finding about the parser
  }
  return path;
}

}  // namespace gpuplan::fuzz
