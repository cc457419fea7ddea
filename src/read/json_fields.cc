#include "read/json_fields.h"

#include "read/json_depth.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "core/error.h"

namespace gpuplan {

int LineOfOffset(const std::string& text, std::size_t offset) {
  int line = 1;
  const std::size_t end = std::min(offset, text.size());
  for (std::size_t i = 0; i < end; ++i) {
    if (text[i] == '\n') {
      ++line;
    }
  }
  return line;
}

namespace {

// Counts the depth of arrays and objects; stops the read (returns false) past the limit.
class DepthCounter final : public nlohmann::json_sax<nlohmann::json> {
 public:
  bool too_deep = false;

  bool null() override { return true; }
  bool boolean(bool /*val*/) override { return true; }
  bool number_integer(number_integer_t /*val*/) override { return true; }
  bool number_unsigned(number_unsigned_t /*val*/) override { return true; }
  bool number_float(number_float_t /*val*/, const string_t& /*s*/) override { return true; }
  bool string(string_t& /*val*/) override { return true; }
  bool binary(binary_t& /*val*/) override { return true; }
  bool start_object(std::size_t /*elements*/) override { return Enter(); }
  bool key(string_t& /*val*/) override { return true; }
  bool end_object() override { return Leave(); }
  bool start_array(std::size_t /*elements*/) override { return Enter(); }
  bool end_array() override { return Leave(); }
  bool parse_error(std::size_t /*position*/, const std::string& /*last_token*/,
                   const nlohmann::detail::exception& /*ex*/) override {
    return false;
  }

 private:
  bool Enter() {
    if (++depth_ > kMaxJsonDepth) {
      too_deep = true;
      return false;
    }
    return true;
  }
  bool Leave() {
    --depth_;
    return true;
  }
  int depth_ = 0;
};

}  // namespace

void CheckJsonDepth(const std::string& text, const std::string& file, int line) {
  DepthCounter counter;
  try {
    nlohmann::json::sax_parse(text, &counter);
  } catch (const nlohmann::json::exception&) {
    // A syntax error: the parse that follows reports it with its position.
  }
  if (counter.too_deep) {
    throw InputError("JSON nested deeper than " + std::to_string(kMaxJsonDepth) +
                         " arrays and objects (gpuplan reads at most that depth)",
                     file, line, "(nesting)");
  }
}

// Nesting deeper than kMaxJsonDepth is an InputError too (CheckJsonDepth, before the parse).
nlohmann::json ParseJsonText(const std::string& text, const std::string& file) {
  CheckJsonDepth(text, file);
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    // e.byte is 1-based position of the error; clamp into the text.
    const std::size_t at = e.byte > 0 ? e.byte - 1 : 0;
    std::string what = e.what();
    // nlohmann's message: "[json.exception.parse_error.101] parse error at line 1, column 2: ..."
    const auto colon = what.find(": ", what.find("parse error"));
    std::string reason = colon == std::string::npos ? what : what.substr(colon + 2);
    throw InputError("malformed JSON: " + reason, file, LineOfOffset(text, at));
  } catch (const nlohmann::json::exception& e) {
    // e.g. out_of_range.406: a number too large for a double.
    std::string what = e.what();
    const auto bracket = what.find("] ");
    throw InputError("malformed JSON: " + (bracket == std::string::npos ? what : what.substr(bracket + 2)), file);
  }
}

JsonFields::JsonFields(const nlohmann::json& object, const std::string& text, std::string file)
    : object_(object), text_(text), file_(std::move(file)) {
  if (!object_.is_object()) {
    throw InputError("expected a JSON object at the top level", file_, 1);
  }
}

int JsonFields::LineOf(const std::string& key) const {
  const auto at = text_.find("\"" + key + "\"");
  return at == std::string::npos ? 0 : LineOfOffset(text_, at);
}

void JsonFields::Fail(const std::string& key, const std::string& message) const {
  throw InputError(message, file_, LineOf(key), key);
}

const nlohmann::json* JsonFields::Find(std::initializer_list<const char*> keys, std::string* which) const {
  for (const char* k : keys) {
    auto it = object_.find(k);
    if (it != object_.end() && !it->is_null()) {
      if (which != nullptr) {
        *which = k;
      }
      return &*it;
    }
  }
  return nullptr;
}

bool JsonFields::Has(std::initializer_list<const char*> keys) const { return Find(keys) != nullptr; }

int64_t JsonFields::IntOr(std::initializer_list<const char*> keys, int64_t fallback, int64_t max_value,
                          int64_t min_value) const {
  std::string key;
  const nlohmann::json* v = Find(keys, &key);
  if (v == nullptr) {
    return fallback;
  }
  int64_t n = 0;
  if (v->is_number_integer()) {
    n = v->get<int64_t>();
  } else if (v->is_number_float() && std::fabs(v->get<double>()) < 9e18 && v->get<double>() == std::floor(v->get<double>())) {
    n = static_cast<int64_t>(v->get<double>());
  } else {
    Fail(key, "expected an integer, got " + v->dump());
  }
  if (n < min_value) {
    Fail(key, "must be at least " + std::to_string(min_value) + ", got " + std::to_string(n));
  }
  if (n > max_value) {
    Fail(key, "is implausibly large (" + std::to_string(n) + " > " + std::to_string(max_value) + ")");
  }
  return n;
}

int64_t JsonFields::Int(std::initializer_list<const char*> keys, int64_t max_value) const {
  if (!Has(keys)) {
    Fail(*keys.begin(), "required field is missing");
  }
  return IntOr(keys, 0, max_value);
}

bool JsonFields::BoolOr(std::initializer_list<const char*> keys, bool fallback) const {
  std::string key;
  const nlohmann::json* v = Find(keys, &key);
  if (v == nullptr) {
    return fallback;
  }
  if (!v->is_boolean()) {
    Fail(key, "expected true or false, got " + v->dump());
  }
  return v->get<bool>();
}

double JsonFields::NumberOr(std::initializer_list<const char*> keys, double fallback) const {
  std::string key;
  const nlohmann::json* v = Find(keys, &key);
  if (v == nullptr) {
    return fallback;
  }
  if (!v->is_number()) {
    Fail(key, "expected a number, got " + v->dump());
  }
  return v->get<double>();
}

std::string JsonFields::StringOr(std::initializer_list<const char*> keys, const std::string& fallback) const {
  std::string key;
  const nlohmann::json* v = Find(keys, &key);
  if (v == nullptr) {
    return fallback;
  }
  if (!v->is_string()) {
    Fail(key, "expected a string, got " + v->dump());
  }
  return v->get<std::string>();
}

}  // namespace gpuplan
