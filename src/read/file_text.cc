#include "read/file_text.h"

#include <fstream>
#include <sstream>

#include "core/error.h"

namespace gpuplan {

std::string ReadFileText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw InputError("cannot open file", path);
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace gpuplan
