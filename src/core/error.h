// Typed errors shared by every part of gpuplan.
//
// InputError: the user's input (a file, a flag, a name) is wrong. It carries where:
// file, line (1-based, 0 = unknown) and field, so every front end can print one clear line
// and map it to exit code 2 (CLI) or HTTP 400 (server).
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace gpuplan {

class InputError : public std::runtime_error {
 public:
  InputError(std::string message, std::string file = {}, int line = 0, std::string field = {});

  const std::string& file() const { return file_; }
  int line() const { return line_; }
  const std::string& field() const { return field_; }
  const std::string& message() const { return message_; }

 private:
  std::string message_;
  std::string file_;
  int line_;
  std::string field_;
};

// The environment lacks something needed (a driver, a file we must write): exit code 3.
class EnvironmentError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Formats "file:line: field: message" leaving out the parts that are unknown.
std::string FormatLocation(const std::string& file, int line, const std::string& field);

}  // namespace gpuplan
