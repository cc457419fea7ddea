#include "core/error.h"

namespace gpuplan {

std::string FormatLocation(const std::string& file, int line, const std::string& field) {
  std::string out;
  if (!file.empty()) {
    out += file;
    if (line > 0) {
      out += ":" + std::to_string(line);
    }
    out += ": ";
  }
  if (!field.empty()) {
    out += "field '" + field + "': ";
  }
  return out;
}

InputError::InputError(std::string message, std::string file, int line, std::string field)
    : std::runtime_error(FormatLocation(file, line, field) + message),
      message_(std::move(message)),
      file_(std::move(file)),
      line_(line),
      field_(std::move(field)) {}

}  // namespace gpuplan
