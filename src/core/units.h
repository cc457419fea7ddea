// Units as types. Sizes are bytes (double: per-parameter byte counts such as 0.516 for NF4
// are fractional), times seconds. Named constants for binary prefixes.
#pragma once

#include <cstdint>

namespace gpuplan {

inline constexpr double kKiB = 1024.0;
inline constexpr double kMiB = 1024.0 * kKiB;
inline constexpr double kGiB = 1024.0 * kMiB;
inline constexpr double kGB = 1e9;

// A size in bytes. Thin wrapper so a byte count cannot be mixed up with a parameter count.
struct Bytes {
  double value = 0;
  constexpr Bytes() = default;
  constexpr explicit Bytes(double v) : value(v) {}
  constexpr double gib() const { return value / kGiB; }
  constexpr Bytes& operator+=(Bytes o) {
    value += o.value;
    return *this;
  }
  friend constexpr Bytes operator+(Bytes a, Bytes b) { return Bytes(a.value + b.value); }
  friend constexpr Bytes operator-(Bytes a, Bytes b) { return Bytes(a.value - b.value); }
  friend constexpr Bytes operator*(Bytes a, double k) { return Bytes(a.value * k); }
  friend constexpr Bytes operator*(double k, Bytes a) { return Bytes(a.value * k); }
  friend constexpr Bytes operator/(Bytes a, double k) { return Bytes(a.value / k); }
  friend constexpr bool operator<(Bytes a, Bytes b) { return a.value < b.value; }
  friend constexpr bool operator<=(Bytes a, Bytes b) { return a.value <= b.value; }
  friend constexpr bool operator>(Bytes a, Bytes b) { return a.value > b.value; }
};

constexpr Bytes GiB(double n) { return Bytes(n * kGiB); }
constexpr Bytes MiB(double n) { return Bytes(n * kMiB); }

}  // namespace gpuplan
