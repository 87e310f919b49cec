// shape plugin, internal: tensor geometry, the view-op table and the copy engine.
//
// Every op of this plugin is a statement about geometry: a view op maps the input's
// (shape, strides, offset) to an output's, pointing into the same memory; a copying op
// moves elements from one geometry into a contiguous buffer. Nothing here looks at
// element values, so every dtype is handled alike, by its size in bytes.
#pragma once

#include <switchyard/plugin.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace sy_shape {

using Shape = std::vector<int64_t>;

std::string to_string(const Shape& s);  // "[2, 3]"
int64_t product(const Shape& s);
Shape contiguous_strides(const Shape& shape);

// Where a tensor's elements lie, in elements, relative to the first element of its input.
struct Geometry {
  Shape shape, strides;
  int64_t offset = 0;
  // Set by reshape/flatten/contiguous when no view can express the result: the output
  // is then a row-major copy of the input's elements, shaped `shape`.
  bool copy = false;
};

Geometry geometry_of(const DLTensor& t);  // offset 0; NULL strides made explicit
bool is_contiguous(const Geometry& g);    // ATen's rule: size-1 dims don't count

// ATen's dim wrapping: dim in [-n, n); a 0-dim tensor takes dims -1 and 0.
int64_t wrap_dim(int64_t dim, int64_t ndim, const char* what = "dim");

// ---- the single-input ops (views, reshapes, splits) -----------------------------------

// Attribute values read once when the kernel is created.
struct Params {
  Shape ints;                   // size, shape, dims, sizes, split sizes
  int64_t a = 0, b = 0, c = 0;  // dim / dim0 / start, dim1 / index / length, ...
  bool has_a = false, has_b = false, has_c = false;
  bool ints_given = false;
};

// Maps the input's geometry (and, for the *_as ops, the other input's shape) to the
// outputs' geometries. Throws sy::Error with ATen's reason for invalid arguments.
using GeometryFn = std::vector<Geometry> (*)(const Geometry& in, const Params& p, const Shape* other);
using ParseFn = Params (*)(const sy::Node& node);

struct ViewOp {
  const char* op;     // "aten::view"
  const char* attrs;  // accepted attribute names, space-separated
  int inputs;         // tensor inputs: 1, or 2 for view_as/expand_as/reshape_as
  bool multi;         // a tensor list result: one node output per piece
  ParseFn parse;
  GeometryFn apply;
  bool may_copy = false;  // reshape/flatten/contiguous: copies when no view fits
};

const std::vector<ViewOp>& view_ops();  // the table, in views.cpp

// View strides for `shape` over memory laid out as (old_shape, old_strides), or false
// if no view can express it (ATen's view rule).
bool view_strides(const Shape& old_shape, const Shape& old_strides, const Shape& shape, Shape* out);
// `sizes` with its one -1 inferred for `numel` elements; checks the element count.
Shape infer_size(const Shape& sizes, int64_t numel);

// ---- gathers (embedding.cpp) -------------------------------------------------------------

void add_embedding_kernels(sy::PluginDef& def, const std::vector<DLDataType>& dtypes);

// ---- the copy engine (copy.cpp) --------------------------------------------------------

// Copies the elements of `shape` from src (walked with src_strides) to dst (walked with
// dst_strides); strides in elements, never negative. Contiguous runs go by memcpy,
// transposing layouts through oneDNN's reorder.
void copy_strided(const void* src, const Shape& src_strides, void* dst, const Shape& dst_strides, const Shape& shape,
                  size_t elem_size);

}  // namespace sy_shape
