// Reading fields out of a JSON document with errors that name file, line and field.
// nlohmann::json keeps no source positions, so the line of a field is found by locating
// its quoted key in the text (first occurrence; good enough for flat HF configs).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>

namespace gpuplan {

// Parses text; a syntax error becomes InputError with the line of the offending byte.
nlohmann::json ParseJsonText(const std::string& text, const std::string& file);

// Line (1-based) of byte `offset` in text.
int LineOfOffset(const std::string& text, std::size_t offset);

class JsonFields {
 public:
  JsonFields(const nlohmann::json& object, const std::string& text, std::string file);

  bool Has(std::initializer_list<const char*> keys) const;
  // Positive integer; the first key present wins. Throws when absent or invalid.
  int64_t Int(std::initializer_list<const char*> keys, int64_t max_value) const;
  // Like Int but returns `fallback` when absent or null. Zero is accepted only if min_value is 0.
  int64_t IntOr(std::initializer_list<const char*> keys, int64_t fallback, int64_t max_value,
                int64_t min_value = 1) const;
  bool BoolOr(std::initializer_list<const char*> keys, bool fallback) const;
  double NumberOr(std::initializer_list<const char*> keys, double fallback) const;
  std::string StringOr(std::initializer_list<const char*> keys, const std::string& fallback) const;
  const nlohmann::json* Find(std::initializer_list<const char*> keys, std::string* which = nullptr) const;

  [[noreturn]] void Fail(const std::string& key, const std::string& message) const;
  int LineOf(const std::string& key) const;
  const std::string& file() const { return file_; }

 private:
  const nlohmann::json& object_;
  const std::string& text_;
  std::string file_;
};

}  // namespace gpuplan
