//===- Conversions.cpp - bf16 conversions of compiled dlvm code ------------===//
//
// LLVM lowers a float-to-bf16 truncation on x86 without AVX512-BF16 to a call
// of the compiler-rt builtins `__truncsfbf2` / `__truncdfbf2`, which libgcc
// (GCC 12, Debian 12) does not have; the MLIR ExecutionEngine resolved them
// itself. Compiled shared objects find them here. Round to nearest, ties to
// even; NaN stays a (quiet) NaN.
//
// A bf16 is returned like a _Float16: its 16 bits in the low half of XMM0.
//
//===----------------------------------------------------------------------===//
#include "dlvm-runtime/Runtime.h"

#include <cmath>
#include <cstdint>
#include <cstring>

namespace {
std::uint16_t floatToBF16Bits(float value) {
  std::uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  if ((bits & 0x7fffffffu) > 0x7f800000u) // NaN: keep the sign, make it quiet
    return static_cast<std::uint16_t>((bits >> 16) | 0x0040u);
  std::uint32_t roundingBias = 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<std::uint16_t>((bits + roundingBias) >> 16);
}

_Float16 asReturned(std::uint16_t bits) {
  _Float16 carrier;
  std::memcpy(&carrier, &bits, sizeof carrier);
  return carrier;
}
} // namespace

extern "C" {

DLVM_RUNTIME_EXPORT _Float16 __truncsfbf2(float value) {
  return asReturned(floatToBF16Bits(value));
}

DLVM_RUNTIME_EXPORT _Float16 __truncdfbf2(double value) {
  // Rounding twice (f64 -> f32 -> bf16) can differ from rounding once;
  // round to odd on the way to f32 to make the second rounding exact.
  float narrowed = static_cast<float>(value);
  if (static_cast<double>(narrowed) != value && narrowed == narrowed) {
    std::uint32_t bits;
    std::memcpy(&bits, &narrowed, sizeof bits);
    if ((bits & 1u) == 0) {
      // the odd neighbour lies towards the exact value: one ulp of magnitude
      // down if rounding went away from zero, else up
      bool awayFromZero = std::fabs(static_cast<double>(narrowed)) > std::fabs(value);
      bits = awayFromZero ? bits - 1 : bits + 1;
      std::memcpy(&narrowed, &bits, sizeof bits);
    }
  }
  return asReturned(floatToBF16Bits(narrowed));
}

} // extern "C"
