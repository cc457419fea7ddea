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

InputError::InputError(std::string message, std::string file, int line, std::string field,
                       std::vector<std::string> suggestions)
    : std::runtime_error(FormatLocation(file, line, field) + message),
      message_(std::move(message)),
      file_(std::move(file)),
      line_(line),
      field_(std::move(field)),
      suggestions_(std::move(suggestions)) {}

std::string_view ToString(ErrorKind k) {
  switch (k) {
    case ErrorKind::kNegative:
      return "negative";
    case ErrorKind::kInput:
      return "input";
    case ErrorKind::kUsage:
      return "usage";
    case ErrorKind::kEnvironment:
      return "environment";
    case ErrorKind::kInternal:
      break;
  }
  return "internal";
}

std::string ErrorReport::Line() const {
  switch (kind) {
    case ErrorKind::kNegative:
      return message;
    case ErrorKind::kInput:
    case ErrorKind::kUsage:
      return "error: " + FormatLocation(file, line, field) + message;
    case ErrorKind::kEnvironment:
      return "environment: " + message;
    case ErrorKind::kInternal:
      break;
  }
  return "internal error: " + message;
}

ErrorReport DescribeError(const std::exception& e) {
  ErrorReport r;
  r.message = e.what();
  if (const auto* in = dynamic_cast<const InputError*>(&e)) {
    r.kind = ErrorKind::kInput;
    r.message = in->message();
    r.file = in->file();
    r.line = in->line();
    r.field = in->field();
    r.suggestions = in->suggestions();
  } else if (dynamic_cast<const EnvironmentError*>(&e) != nullptr) {
    r.kind = ErrorKind::kEnvironment;
  } else if (dynamic_cast<const NegativeAnswer*>(&e) != nullptr) {
    r.kind = ErrorKind::kNegative;
  } else {
    r.kind = ErrorKind::kInternal;
    r.message += " (a bug in gpuplan: please report it on the gpuplan issue tracker with the command line and its "
                 "input files)";
  }
  return r;
}

ErrorReport UsageError(std::string message) {
  ErrorReport r;
  r.kind = ErrorKind::kUsage;
  r.message = std::move(message);
  return r;
}

}  // namespace gpuplan
