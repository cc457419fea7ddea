#include "core/error.h"

#include <algorithm>

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

InputError InputError::Option(std::string key, std::string message, std::vector<std::string> suggestions,
                              std::string file, int line) {
  InputError e(std::move(message), std::move(file), line, std::move(key), std::move(suggestions));
  e.names_option_ = true;
  return e;
}

std::string OptionRef(std::string_view key) { return "`" + std::string(key) + "`"; }

std::string DefaultOptionFlag(const std::string& key) {
  std::string flag = "--" + key;
  std::replace(flag.begin(), flag.end(), '_', '-');
  return flag;
}

InputError SpellOptions(const InputError& e, const std::function<std::string(const std::string& key)>& spell) {
  // Each "`key`" of the message (a key: lower-case letters, digits and '_').
  const std::string& text = e.message();
  std::string message;
  std::size_t i = 0;
  while (i < text.size()) {
    const std::size_t close = text[i] == '`' ? text.find('`', i + 1) : std::string::npos;
    const bool key = close != std::string::npos && close > i + 1 &&
                     std::all_of(text.begin() + static_cast<std::ptrdiff_t>(i) + 1,
                                 text.begin() + static_cast<std::ptrdiff_t>(close), [](char c) {
                                   return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
                                 });
    if (key) {
      message += spell(text.substr(i + 1, close - i - 1));
      i = close + 1;
    } else {
      message += text[i++];
    }
  }
  return InputError(message, e.file(), e.line(), e.names_option() ? spell(e.field()) : e.field(), e.suggestions());
}

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
