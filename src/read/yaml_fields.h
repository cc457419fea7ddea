// Reading typed fields out of a YAML mapping with errors that name file, line and field.
// Shared by every YAML reader (GPU catalog, offers).
#pragma once

#include <yaml-cpp/yaml.h>

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace gpuplan {

int YamlLine(const YAML::Node& n);

// A table row of exactly n numbers (`[m, n, k, tflops]`): InputError `shape` at the row's line when
// it is not a list of n, "expected a number" at an element's line; bounds are the caller's.
void YamlNumberRow(const YAML::Node& row, double* out, std::size_t n, const std::string& shape,
                   const std::string& file, const std::string& field);
template <std::size_t N>
std::array<double, N> YamlNumberRow(const YAML::Node& row, const std::string& shape, const std::string& file,
                                    const std::string& field) {
  std::array<double, N> r{};
  YamlNumberRow(row, r.data(), N, shape, file, field);
  return r;
}

// Parses YAML text; a syntax error becomes InputError with its line.
YAML::Node ParseYamlText(const std::string& text, const std::string& file);

class YamlMap {
 public:
  // `path` prefixes field names in errors, e.g. "offers[nj-a100].".
  YamlMap(const YAML::Node& map, std::string path, std::string file);

  [[noreturn]] void Fail(const std::string& key, const std::string& message) const;
  bool Has(const std::string& key) const;
  YAML::Node Node(const std::string& key) const { return map_[key]; }
  std::string Str(const std::string& key, bool required, const std::string& fallback = "") const;
  // A number in [min, max]; nullopt when absent or null and not required.
  std::optional<double> Number(const std::string& key, bool required, double min, double max) const;
  double Num(const std::string& key, bool required, double fallback, double min, double max) const {
    return Number(key, required, min, max).value_or(fallback);
  }
  // A whole number in [min, max] (a count: 1.5 instances is an error, not 1).
  int64_t Count(const std::string& key, bool required, int64_t fallback, int64_t min, int64_t max) const;
  std::vector<std::string> Strings(const std::string& key) const;
  // Refuses every key of the mapping not in `known` (a misspelt key would otherwise drop the
  // field it meant without a word): InputError at the key's line, field path + key, with the
  // closest known keys as "did you mean". A key that is itself a mapping or list is refused too.
  void Only(const std::vector<std::string>& known) const;
  // A nested mapping (or nullopt when absent); Fail with `expected` when it is not a mapping.
  std::optional<YamlMap> Map(const std::string& key, const std::string& expected) const;
  const std::string& path() const { return path_; }
  const std::string& file() const { return file_; }
  int line() const { return YamlLine(map_); }

 private:
  YAML::Node map_;
  std::string path_;
  std::string file_;
};

}  // namespace gpuplan
