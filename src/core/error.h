// Typed errors shared by every part of gpuplan, and the one meaning of each exit code.
//
// InputError: the user's input (a file, a flag, a name) is wrong. It carries where:
// file, line (1-based, 0 = unknown) and field, and the names the user may have meant
// (suggestions), so every front end can print one clear line or a JSON object (format/error_json.h)
// and map it to exit code 2 (CLI) or HTTP 400 (server).
//
// An error about an option names it by its key ("gpus", InputError::Option), never by how a
// front end spells it: the CLI reports it as its flag (--gpus), the serve API as the JSON key
// (SpellOptions at each front end). A message names other options as OptionRef("key").
#pragma once

#include <cstddef>
#include <exception>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace gpuplan {

// What an error keeps of text that may come from the input (a 100 KB flag value, a key, a path):
// control characters as \xNN, and at most `max_chars` characters, the middle left out
// ("...(N characters left out)..."), so an error stays one readable line whatever the input.
// InputError applies it to its message, file and field.
inline constexpr size_t kErrorMessageMaxChars = 1000;
inline constexpr size_t kErrorFieldMaxChars = 200;
std::string BoundedErrorText(std::string_view text, size_t max_chars);

class InputError : public std::runtime_error {
 public:
  InputError(std::string message, std::string file = {}, int line = 0, std::string field = {},
             std::vector<std::string> suggestions = {});
  // An error about the option with key `key` (field: the key; names_option: true).
  static InputError Option(std::string key, std::string message, std::vector<std::string> suggestions = {},
                           std::string file = {}, int line = 0);

  const std::string& file() const { return file_; }
  int line() const { return line_; }
  const std::string& field() const { return field_; }
  const std::string& message() const { return message_; }
  // Names close to a wrong one ("did you mean"), best first; empty when none apply.
  const std::vector<std::string>& suggestions() const { return suggestions_; }
  // The field is an option's key, for the front end to spell (SpellOptions).
  bool names_option() const { return names_option_; }

 private:
  std::string message_;
  std::string file_;
  int line_;
  std::string field_;
  std::vector<std::string> suggestions_;
  bool names_option_ = false;
};

// An option named in a message: "`key`", spelled by the front end (SpellOptions).
std::string OptionRef(std::string_view key);
// The flag of an option whose table is not at hand: "--" and the key with '-' for '_'.
std::string DefaultOptionFlag(const std::string& key);
// `e` as a front end reports it: an option field (names_option) and each OptionRef of the
// message spelled by `spell` (key -> "--gpus" on the CLI, key -> key in the API). The result
// no longer names_option.
InputError SpellOptions(const InputError& e, const std::function<std::string(const std::string& key)>& spell);

// The environment lacks something needed (a driver, a device, a solver, a file we must write):
// exit code 3.
class EnvironmentError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The answer is no and there is no result to show for it (the offers cannot serve the usage):
// exit code 1. A negative answer that has a result (does not fit, with suggestions) is a result
// with its own flag instead, not an exception.
class NegativeAnswer : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Formats "file:line: field: message" leaving out the parts that are unknown.
std::string FormatLocation(const std::string& file, int line, const std::string& field);

// What went wrong, in the terms every front end reports: the CLI's exit code and one line
// (or, with --json, format/error_json.h), the server's status code.
enum class ErrorKind {
  kNegative,     // 1: the answer is no (does not fit, no feasible plan, check failed)
  kInput,        // 2: a file, flag value or name is wrong
  kUsage,        // 2: the command line itself is wrong (unknown option, missing argument)
  kEnvironment,  // 3: no driver, unreadable device, missing solver, output cannot be written
  kInternal,     // 4: a bug in gpuplan
};

// Exit codes, one meaning in every subcommand (docs/cli.md).
inline constexpr int kExitOk = 0;
inline constexpr int kExitNegative = 1;
inline constexpr int kExitBadInput = 2;
inline constexpr int kExitEnvironment = 3;
inline constexpr int kExitInternal = 4;

constexpr int ExitCode(ErrorKind k) {
  switch (k) {
    case ErrorKind::kNegative:
      return kExitNegative;
    case ErrorKind::kInput:
    case ErrorKind::kUsage:
      return kExitBadInput;
    case ErrorKind::kEnvironment:
      return kExitEnvironment;
    case ErrorKind::kInternal:
      break;
  }
  return kExitInternal;
}

// "negative", "input", "usage", "environment", "internal".
std::string_view ToString(ErrorKind k);

// An error as reported: file, line and field are empty / 0 when unknown.
struct ErrorReport {
  ErrorKind kind = ErrorKind::kInternal;
  std::string message;  // without the location (InputError::message)
  std::string file;
  int line = 0;
  std::string field;
  std::vector<std::string> suggestions;

  // One line for people: the location, the message, and for an internal error the request to
  // report it.
  std::string Line() const;
};

// Classifies an exception: InputError -> input, EnvironmentError -> environment,
// NegativeAnswer -> negative, anything else -> internal (a bug).
ErrorReport DescribeError(const std::exception& e);

// A usage error (the command line could not be parsed).
ErrorReport UsageError(std::string message);

}  // namespace gpuplan
