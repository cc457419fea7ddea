#include "read/file_text.h"

#include <fstream>
#include <sstream>
#include <utility>

#include "core/error.h"

namespace gpuplan {

std::optional<std::string> TryReadFileText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return std::nullopt;
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string ReadFileText(const std::string& path) {
  std::optional<std::string> text = TryReadFileText(path);
  if (!text) {
    throw InputError("cannot open file", path);
  }
  return std::move(*text);
}

}  // namespace gpuplan
