#include "core/error.h"

#include <algorithm>
#include <cstdio>

namespace gpuplan {

namespace {

bool IsUtf8Continuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

}  // namespace

std::string BoundedErrorText(std::string_view text, size_t max_chars) {
  std::string out;
  out.reserve(std::min(text.size(), max_chars) + 16);
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7F) {
      char code[8];
      std::snprintf(code, sizeof code, "\\x%02x", u);
      out += code;
    } else {
      out += c;
    }
  }
  if (out.size() <= max_chars) {
    return out;
  }
  // Keep the start (what was wrong) and the end (the closing quote, the hint after it), cut on
  // UTF-8 character boundaries; with the marker the result stays within max_chars, so bounding
  // it again (an error rethrown with its message) changes nothing.
  constexpr size_t kMarkerChars = 40;  // "...(N characters left out)...", N up to 20 digits
  const size_t budget = max_chars > kMarkerChars ? max_chars - kMarkerChars : 0;
  size_t head = budget * 2 / 3;
  while (head > 0 && IsUtf8Continuation(out[head])) {
    --head;
  }
  size_t tail = out.size() - (budget - budget * 2 / 3);
  while (tail < out.size() && IsUtf8Continuation(out[tail])) {
    ++tail;
  }
  const auto left_out = std::count_if(out.begin() + static_cast<std::ptrdiff_t>(head),
                                      out.begin() + static_cast<std::ptrdiff_t>(tail),
                                      [](char c) { return !IsUtf8Continuation(c); });
  return out.substr(0, head) + "...(" + std::to_string(left_out) + " characters left out)..." + out.substr(tail);
}

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
    : std::runtime_error(FormatLocation(BoundedErrorText(file, kErrorMessageMaxChars), line,
                                        BoundedErrorText(field, kErrorFieldMaxChars)) +
                         BoundedErrorText(message, kErrorMessageMaxChars)),
      message_(BoundedErrorText(message, kErrorMessageMaxChars)),
      file_(BoundedErrorText(file, kErrorMessageMaxChars)),
      line_(line),
      field_(BoundedErrorText(field, kErrorFieldMaxChars)),
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
