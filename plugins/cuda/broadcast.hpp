// cuda plugin, internal: shapes, numpy broadcasting and the strided walks the device
// kernels take (pure host code; the unit tests check it).
#pragma once

#include "launch.hpp"

#include <switchyard/plugin.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace sycuda {

using Shape = std::vector<int64_t>;
std::string str(const Shape& s);  // "[2, 3]"
int64_t product(const Shape& s);

// ATen's dim wrapping: dim in [-n, n) (a 0-dim tensor takes -1 and 0); sy::Error otherwise.
int64_t wrap_dim(int64_t dim, int64_t ndim, const char* what);
// numpy broadcasting of two shapes; sy::Error naming `what` if they don't.
Shape broadcast_shapes(const Shape& a, const Shape& b, const std::string& what);
// Compact strides of `shape` laid against `out` (right-aligned), 0 where broadcast.
Shape broadcast_strides(const Shape& shape, const Shape& out);
// A walk over `out`: dims of size 1 dropped, and a dim merged into the next where every
// operand in `operands` (element strides over `out`, rewritten to the merged dims) steps
// through it as one more run of the next. Unsupported beyond launch::kMaxDims dims.
launch::Walk make_walk(const Shape& out, std::vector<Shape*> operands);

}  // namespace sycuda
