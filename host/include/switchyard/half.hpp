// IEEE binary16 and bfloat16 to and from float32, one element at a time: for the
// precision policy's conversions at load (ir/precision.cpp) and the CLI's JSON tensors.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace switchyard {

inline float half_to_float(uint16_t h) {
  const uint32_t sign = (h >> 15) & 1, exp = (h >> 10) & 0x1F, mant = h & 0x3FF;
  float v;
  if (exp == 0)
    v = std::ldexp(static_cast<float>(mant), -24);  // zero and subnormals
  else if (exp == 31)
    v = mant ? std::nanf("") : INFINITY;
  else
    v = std::ldexp(static_cast<float>(mant | 0x400), static_cast<int>(exp) - 25);
  return sign ? -v : v;
}

inline float bfloat16_to_float(uint16_t b) {
  const uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// Round to nearest even; for finite values (the CLI's sample inputs).
inline uint16_t float_to_half(float f) {
  uint16_t sign = std::signbit(f) ? 0x8000 : 0;
  float a = std::fabs(f);
  if (a < std::ldexp(1.0f, -24)) return sign;
  int e;
  std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
  if (e - 1 < -14) return static_cast<uint16_t>(sign | static_cast<uint16_t>(std::nearbyint(std::ldexp(a, 24))));
  uint32_t mant = static_cast<uint32_t>(std::nearbyint(std::ldexp(a, 11 - e)));  // 11 significant bits
  int exp = e - 1 + 15;
  if (mant == 0x800) {
    mant = 0x400;
    ++exp;
  }
  if (exp >= 31) return static_cast<uint16_t>(sign | 0x7C00);
  return static_cast<uint16_t>(sign | (exp << 10) | (mant & 0x3FF));
}

// Round to nearest even; for finite values.
inline uint16_t float_to_bfloat16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  bits += 0x7FFF + ((bits >> 16) & 1);
  return static_cast<uint16_t>(bits >> 16);
}

}  // namespace switchyard
