// Header-only C++ helpers for plugins over shapes: printing one, numpy broadcasting of two.
// Not part of the C ABI; plugins that take broadcasting operands share these instead of
// each keeping a copy.
#ifndef SWITCHYARD_SHAPES_HPP
#define SWITCHYARD_SHAPES_HPP

#include <switchyard/plugin.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace sy {

// "[2, 3]", as error messages print a shape.
inline std::string shape_string(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// numpy broadcasting: the shapes aligned on the right, each pair of sizes equal or one of
// them 1. Otherwise sy::Error "<what>: shapes [2, 3] and [2] do not broadcast" (no prefix
// for an empty `what`).
inline std::vector<int64_t> broadcast_shapes(const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                                             const std::string& what = "") {
  std::vector<int64_t> out(std::max(a.size(), b.size()));
  for (size_t i = 1; i <= out.size(); ++i) {
    const int64_t x = i <= a.size() ? a[a.size() - i] : 1, y = i <= b.size() ? b[b.size() - i] : 1;
    if (x != y && x != 1 && y != 1)
      throw Error((what.empty() ? "" : what + ": ") + "shapes " + shape_string(a) + " and " + shape_string(b) +
                  " do not broadcast");
    out[out.size() - i] = x == 1 ? y : x;
  }
  return out;
}

}  // namespace sy

#endif  // SWITCHYARD_SHAPES_HPP
