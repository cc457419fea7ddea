// One table of names per enum: the first entry of a value is its canonical name (what gpuplan
// prints and writes in JSON); later entries of the same value are accepted spellings. Printing
// and parsing both read the table, so they cannot drift apart.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/names.h"

namespace gpuplan {

template <typename E>
struct EnumName {
  const char* name;
  E value;
};

template <typename E, std::size_t N>
const char* NameOf(const EnumName<E> (&table)[N], E v) {
  for (const auto& e : table) {
    if (e.value == v) {
      return e.name;
    }
  }
  return "?";
}

// The value a name spells (case- and punctuation-insensitive), or nullopt.
template <typename E, std::size_t N>
std::optional<E> FindEnumName(const EnumName<E> (&table)[N], const std::string& s) {
  const std::string n = NormalizeName(s);
  for (const auto& e : table) {
    if (NormalizeName(e.name) == n) {
      return e.value;
    }
  }
  return std::nullopt;
}

// Case- and punctuation-insensitive; an unknown name throws InputError naming `field`, listing
// the canonical names.
template <typename E, std::size_t N>
E ParseEnumName(const EnumName<E> (&table)[N], const std::string& s, const std::string& field,
                const std::string& file = "", int line = 0, const std::string& shown = "") {
  if (const std::optional<E> v = FindEnumName(table, s)) {
    return *v;
  }
  std::vector<std::string> names;
  for (const auto& e : table) {
    if (NameOf(table, e.value) == e.name) {
      names.emplace_back(e.name);
    }
  }
  throw InputError("expected " + JoinOr(names) + ", got '" + (shown.empty() ? s : shown) + "'", file, line, field);
}

}  // namespace gpuplan
