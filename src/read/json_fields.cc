#include "read/json_fields.h"

#include "read/json_depth.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

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

// The events of nlohmann's SAX reader a structural check passes over: every value (the checks
// below read only nesting and names); a syntax error stops the read, for the parse to report.
class StructureSax : public nlohmann::json_sax<nlohmann::json> {
 public:
  bool null() override { return true; }
  bool boolean(bool /*val*/) override { return true; }
  bool number_integer(number_integer_t /*val*/) override { return true; }
  bool number_unsigned(number_unsigned_t /*val*/) override { return true; }
  bool number_float(number_float_t /*val*/, const string_t& /*s*/) override { return true; }
  bool string(string_t& /*val*/) override { return true; }
  bool binary(binary_t& /*val*/) override { return true; }
  bool parse_error(std::size_t /*position*/, const std::string& /*last_token*/,
                   const nlohmann::detail::exception& /*ex*/) override {
    return false;
  }
};

// Counts the depth of arrays and objects and stops the read (returns false) past the limit; also
// stops at a name given twice in one object (RFC 8259 §4: "The names within an object SHOULD be
// unique", and where they are not, implementations differ: nlohmann keeps the last value, so
// `{"gpus": 8, "gpus": 1}` would be read as 1 without a word).
class Precheck final : public StructureSax {
 public:
  bool too_deep = false;
  std::optional<std::string> duplicate;  // the name given twice
  int64_t names_before = 0;              // how many names come before it in the text

  bool start_object(std::size_t /*elements*/) override { return Enter(true); }
  bool key(string_t& val) override {
    if (objects_ == 0 || open_[objects_ - 1].Add(val)) {
      ++names_;
      return true;
    }
    duplicate = val;
    names_before = names_;
    return false;
  }
  bool end_object() override { return Leave(); }
  bool start_array(std::size_t /*elements*/) override { return Enter(false); }
  bool end_array() override { return Leave(); }

 private:
  // An open object's names: a short list searched in place (objects have a few dozen names), a
  // hash set once it grows past that, so that a hostile object of a million names stays linear.
  struct Open {
    std::vector<std::string> names;
    std::unordered_set<std::string> many;
    void Clear() {
      names.clear();
      if (!many.empty()) {
        // Dropped rather than cleared: clear() walks every bucket, and a set grown to a hostile
        // object's million names would make each small object after it cost a million.
        many = std::unordered_set<std::string>();
      }
    }
    bool Add(const std::string& name) {
      if (!many.empty()) {
        return many.insert(name).second;
      }
      if (std::find(names.begin(), names.end(), name) != names.end()) {
        return false;
      }
      names.push_back(name);
      if (names.size() > 32) {
        many.insert(names.begin(), names.end());
      }
      return true;
    }
  };
  bool Enter(bool object) {
    if (++depth_ > kMaxJsonDepth) {
      too_deep = true;
      return false;
    }
    if (object) {
      // The first `objects_` of open_ are the open objects; the rest keep their capacity for the
      // next ones (a recording opens and closes a million small objects).
      if (objects_ == open_.size()) {
        open_.emplace_back();
      } else {
        open_[objects_].Clear();
      }
      ++objects_;
    } else {
      open_arrays_.push_back(objects_);
    }
    return true;
  }
  bool Leave() {
    --depth_;
    // Which closed: an array if the innermost open array began after the innermost object.
    if (!open_arrays_.empty() && open_arrays_.back() == objects_) {
      open_arrays_.pop_back();
    } else if (objects_ > 0) {
      --objects_;
    }
    return true;
  }
  int depth_ = 0;
  std::vector<Open> open_;
  std::size_t objects_ = 0;
  std::vector<std::size_t> open_arrays_;  // for each open array, the count of objects open when it began
  int64_t names_ = 0;
};

// Counts the appearances of one name among the first `names` names of a text (stops there).
class NameCounter final : public StructureSax {
 public:
  NameCounter(const std::string& name, int64_t names) : name_(name), left_(names) {}
  int count = 0;

  bool start_object(std::size_t /*elements*/) override { return true; }
  bool key(string_t& val) override {
    if (left_-- <= 0) {
      return false;
    }
    count += val == name_ ? 1 : 0;
    return true;
  }
  bool end_object() override { return true; }
  bool start_array(std::size_t /*elements*/) override { return true; }
  bool end_array() override { return true; }

 private:
  const std::string& name_;
  int64_t left_;
};

// The line of the name given twice: the appearances of the name among the names before it, read
// again (only once a duplicate is found, so the check itself keeps no count), then the text's
// next `"name"` followed by a ':' after that many (0 when the name is written with escapes and is
// not found as it reads).
int LineOfName(const std::string& text, const std::string& name, int64_t names_before) {
  NameCounter counter(name, names_before);
  try {
    nlohmann::json::sax_parse(text, &counter);
  } catch (const nlohmann::json::exception&) {
  }
  const int occurrence = counter.count + 1;
  const std::string quoted = "\"" + name + "\"";
  std::size_t at = 0;
  for (int seen = 0;; ++at) {
    at = text.find(quoted, at);
    if (at == std::string::npos) {
      return 0;
    }
    std::size_t after = at + quoted.size();
    while (after < text.size() && (text[after] == ' ' || text[after] == '\t' || text[after] == '\n' || text[after] == '\r')) {
      ++after;
    }
    if (after < text.size() && text[after] == ':' && ++seen == occurrence) {
      return LineOfOffset(text, at);
    }
  }
}

}  // namespace

void CheckJsonInput(const std::string& text, const std::string& file, int line) {
  Precheck check;
  try {
    nlohmann::json::sax_parse(text, &check);
  } catch (const nlohmann::json::exception&) {
    // A syntax error: the parse that follows reports it with its position.
  }
  if (check.too_deep) {
    throw InputError("JSON nested deeper than " + std::to_string(kMaxJsonDepth) +
                         " arrays and objects (gpuplan reads at most that depth)",
                     file, line, "(nesting)");
  }
  if (check.duplicate) {
    // (A long name is cut in the middle by InputError, core/error.h BoundedErrorText.)
    const std::string& name = *check.duplicate;
    throw InputError("the name \"" + name + "\" is given twice in one object: gpuplan reads one value a name, and " +
                         "which one would be a guess (RFC 8259 §4)",
                     file, line > 0 ? line : LineOfName(text, name, check.names_before), name);
  }
}

// Nesting deeper than kMaxJsonDepth and a name given twice in one object are InputErrors too
// (CheckJsonInput, before the parse).
nlohmann::json ParseJsonText(const std::string& text, const std::string& file) {
  CheckJsonInput(text, file);
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
