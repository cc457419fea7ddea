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

// QLoRA's NF4 storage per parameter (Dettmers et al. 2023, section 3): 4 bits, an 8-bit absmax
// per block of 64 (double quantisation) and a 32-bit constant per 256 of those blocks:
// (4 + 8/64 + 32/(64 x 256)) / 8 = 0.5159 bytes. Memory and the time model use this one figure.
inline constexpr double kNf4BytesPerParam = (4.0 + 8.0 / 64.0 + 32.0 / (64.0 * 256.0)) / 8.0;

constexpr Bytes GiB(double n) { return Bytes(n * kGiB); }
constexpr Bytes MiB(double n) { return Bytes(n * kMiB); }

}  // namespace gpuplan
