// What the fuzz targets read libFuzzer's bytes with: one byte at a time (0 once they run
// out), and integers that favour small values and the edges where size arithmetic breaks.
#pragma once

#include <cstddef>
#include <cstdint>

namespace syfuzz {

struct Bytes {
  const uint8_t* p;
  size_t n;
  int64_t small_low;  // most numbers fall in [small_low, small_low + small_span)
  int64_t small_span;

  uint8_t byte() {
    if (n == 0) return 0;
    --n;
    return *p++;
  }
  int64_t number() {
    static constexpr int64_t kEdges[] = {0,
                                         1,
                                         2,
                                         3,
                                         -1,
                                         -2,
                                         7,
                                         64,
                                         1000,
                                         int64_t{1} << 31,
                                         int64_t{1} << 32,
                                         int64_t{1} << 62,
                                         INT64_MAX,
                                         INT64_MIN,
                                         -(int64_t{1} << 40)};
    const uint8_t b = byte();
    if (b < 200) return static_cast<int64_t>(b % small_span) + small_low;
    if (b < 230) return kEdges[b % (sizeof kEdges / sizeof kEdges[0])];
    uint64_t v = 0;  // unsigned: shifting a negative value is undefined
    for (int k = 0; k < 8; ++k) v = (v << 8) | byte();
    return static_cast<int64_t>(v);
  }
};

}  // namespace syfuzz
