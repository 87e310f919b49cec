// Header-only C++ helpers for plugins over shapes: printing one, numpy broadcasting of two,
// a key for a tensor's layout. Not part of the C ABI; plugins that take broadcasting operands share these instead of
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

// The element strides that walk an operand of `shape` (with element `strides`) along an
// output of shape `out` it broadcasts to: right-aligned, 0 along the dims it is broadcast
// on (size 1) and the leading dims it lacks. Checking that it broadcasts is
// broadcast_shapes' job.
inline std::vector<int64_t> broadcast_strides(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides,
                                              const std::vector<int64_t>& out) {
  std::vector<int64_t> result(out.size(), 0);
  for (size_t i = 1; i <= shape.size() && i <= out.size(); ++i)
    if (shape[shape.size() - i] != 1) result[out.size() - i] = strides[strides.size() - i];
  return result;
}

// The same for a DLTensor (NULL strides: compact row-major).
inline std::vector<int64_t> broadcast_strides(const DLTensor& t, const std::vector<int64_t>& out) {
  return broadcast_strides(shape_of(t), strides_of(t), out);
}

// A tensor's shape and strides as one call saw them, to tell whether a later call's tensor
// is laid out the same (a kernel that remembers what it worked out for the last call).
// Data, dtype and device are not part of it. A NULL tensor (an absent operand) is a key
// of its own.
struct LayoutKey {
  bool present = false;
  std::vector<int64_t> shape, strides;  // strides empty: the tensor's were NULL (compact)

  static LayoutKey of(const DLTensor* t) {
    LayoutKey k;
    if (t == nullptr) return k;
    k.present = true;
    k.shape.assign(t->shape, t->shape + t->ndim);
    if (t->strides != nullptr && t->ndim > 0) k.strides.assign(t->strides, t->strides + t->ndim);
    return k;
  }

  bool matches(const DLTensor* t) const {
    if (t == nullptr || !present) return t == nullptr && !present;
    if (static_cast<size_t>(t->ndim) != shape.size() || !std::equal(shape.begin(), shape.end(), t->shape)) return false;
    if (t->strides == nullptr || t->ndim == 0) return strides.empty();
    return strides.size() == shape.size() && std::equal(strides.begin(), strides.end(), t->strides);
  }
};

}  // namespace sy

#endif  // SWITCHYARD_SHAPES_HPP
