// shape plugin: the geometry of every single-input op, one table row per op.
//
// Each row maps the input's (shape, strides, offset) to its outputs' with ATen's rules
// (argument checks, dim wrapping, slice clamping, the view/copy choice of reshape), so
// a node gives the same result here as on the aten plugin. Messages follow ATen's.
#include "shape_ops.hpp"

#include <switchyard/aten_dtype.hpp>

#include <algorithm>

namespace sy_shape {

std::string to_string(const Shape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

int64_t product(const Shape& s) {
  int64_t n = 1;
  for (int64_t v : s) n *= v;
  return n;
}

Shape contiguous_strides(const Shape& shape) {
  Shape strides(shape.size());
  int64_t step = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    strides[d] = step;
    step *= std::max<int64_t>(shape[d], 1);
  }
  return strides;
}

Geometry geometry_of(const DLTensor& t) {
  Geometry g;
  g.shape.assign(t.shape, t.shape + t.ndim);
  g.strides = t.strides != nullptr ? Shape(t.strides, t.strides + t.ndim) : contiguous_strides(g.shape);
  return g;
}

bool is_contiguous(const Geometry& g) {
  if (product(g.shape) == 0) return true;
  int64_t expected = 1;
  for (size_t d = g.shape.size(); d-- > 0;) {
    if (g.shape[d] == 1) continue;
    if (g.strides[d] != expected) return false;
    expected *= g.shape[d];
  }
  return true;
}

int64_t wrap_dim(int64_t dim, int64_t ndim, const char* what) {
  const int64_t n = std::max<int64_t>(ndim, 1);
  if (dim < -n || dim >= n)
    throw sy::Error(std::string(what) + ": dimension out of range (expected to be in range of [" + std::to_string(-n) +
                    ", " + std::to_string(n - 1) + "], but got " + std::to_string(dim) + ")");
  return dim < 0 ? dim + n : dim;
}

Shape infer_size(const Shape& sizes, int64_t numel) {
  Shape out = sizes;
  int64_t known = 1, free_dim = -1;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] == -1) {
      if (free_dim >= 0) throw sy::Error("only one dimension can be inferred");
      free_dim = static_cast<int64_t>(d);
    } else if (sizes[d] < 0) {
      throw sy::Error("invalid shape dimension " + std::to_string(sizes[d]));
    } else {
      known *= sizes[d];
    }
  }
  if (free_dim >= 0) {
    if (known == 0)
      throw sy::Error("cannot reshape tensor of 0 elements into shape " + to_string(sizes) +
                      " because the unspecified dimension size -1 can be any value and is ambiguous");
    if (numel % known == 0)
      out[free_dim] = numel / known;
    else
      known = -1;  // reported below
  }
  if (product(out) != numel || known < 0)
    throw sy::Error("shape '" + to_string(sizes) + "' is invalid for input of size " + std::to_string(numel));
  return out;
}

// The input's dims (size-1 ones dropped) fall into blocks that are contiguous among
// themselves; a view exists iff every new dim lies inside one block and the new dims
// end exactly at each block's boundary.
bool view_strides(const Shape& old_shape, const Shape& old_strides, const Shape& shape, Shape* out) {
  out->assign(shape.size(), 1);
  if (product(old_shape) == 0) {
    *out = contiguous_strides(shape);
    return true;
  }
  struct Block {
    int64_t numel, stride;
  };  // stride: that of the block's innermost element
  std::vector<Block> blocks;
  for (size_t d = 0; d < old_shape.size(); ++d) {
    if (old_shape[d] == 1) continue;
    if (!blocks.empty() && blocks.back().stride == old_shape[d] * old_strides[d]) {
      blocks.back().numel *= old_shape[d];
      blocks.back().stride = old_strides[d];
    } else {
      blocks.push_back({old_shape[d], old_strides[d]});
    }
  }
  int64_t b = static_cast<int64_t>(blocks.size()) - 1, filled = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    if (b < 0) {
      if (shape[d] != 1) return false;
      (*out)[d] = 1;
      continue;
    }
    (*out)[d] = filled * blocks[b].stride;
    filled *= shape[d];
    if (filled > blocks[b].numel) return false;
    if (filled == blocks[b].numel) --b, filled = 1;
  }
  return b < 0;
}

namespace {

using Geometries = std::vector<Geometry>;

// ---- attribute parsing -----------------------------------------------------------------

Params none(const sy::Node&) { return {}; }

Params read(const sy::Node& n, const char* list, const char* a = nullptr, const char* b = nullptr,
            const char* c = nullptr) {
  Params p;
  if (list != nullptr && n.attrs.has(list)) p.ints = n.attrs.ints(list), p.ints_given = true;
  if (a != nullptr && n.attrs.has(a)) p.a = n.attrs.i(a), p.has_a = true;
  if (b != nullptr && n.attrs.has(b)) p.b = n.attrs.i(b), p.has_b = true;
  if (c != nullptr && n.attrs.has(c)) p.c = n.attrs.i(c), p.has_c = true;
  return p;
}

void require(bool given, const char* name) {
  if (!given) throw sy::Error(std::string("attribute '") + name + "' is missing");
}

// ---- views --------------------------------------------------------------------------------

Geometry view_to(const Geometry& in, const Shape& sizes, bool may_copy) {
  Geometry out;
  out.shape = infer_size(sizes, product(in.shape));
  out.offset = in.offset;
  if (view_strides(in.shape, in.strides, out.shape, &out.strides)) return out;
  if (!may_copy)
    throw sy::Error(
        "view size is not compatible with input tensor's size and stride (at least one "
        "dimension spans across two contiguous subspaces); use reshape instead");
  out.strides = contiguous_strides(out.shape);
  out.copy = true;
  return out;
}

Geometry drop_dim(const Geometry& in, int64_t dim) {
  Geometry out = in;
  out.shape.erase(out.shape.begin() + dim);
  out.strides.erase(out.strides.begin() + dim);
  return out;
}

Geometries view(const Geometry& in, const Params& p, const Shape*) {
  require(p.ints_given, "size");
  return {view_to(in, p.ints, false)};
}
Geometries reshape(const Geometry& in, const Params& p, const Shape*) {
  require(p.ints_given, "shape");
  return {view_to(in, p.ints, true)};
}
Geometries view_as(const Geometry& in, const Params&, const Shape* other) { return {view_to(in, *other, false)}; }
Geometries reshape_as(const Geometry& in, const Params&, const Shape* other) { return {view_to(in, *other, true)}; }

Geometries flatten(const Geometry& in, const Params& p, const Shape*) {
  const int64_t n = static_cast<int64_t>(in.shape.size());
  if (n == 0) return {view_to(in, {1}, true)};
  const int64_t start = wrap_dim(p.has_a ? p.a : 0, n, "flatten"), end = wrap_dim(p.has_b ? p.b : -1, n, "flatten");
  if (start > end) throw sy::Error("flatten() has invalid args: start_dim cannot come after end_dim");
  if (start == end) return {in};
  Shape sizes(in.shape.begin(), in.shape.begin() + start);
  sizes.push_back(product(Shape(in.shape.begin() + start, in.shape.begin() + end + 1)));
  sizes.insert(sizes.end(), in.shape.begin() + end + 1, in.shape.end());
  return {view_to(in, sizes, true)};
}

Geometries unflatten(const Geometry& in, const Params& p, const Shape*) {
  require(p.has_a, "dim");
  require(p.ints_given, "sizes");
  if (p.ints.empty()) throw sy::Error("unflatten: sizes must be non-empty");
  const int64_t dim = wrap_dim(p.a, static_cast<int64_t>(in.shape.size()), "unflatten");
  Shape inner;
  try {
    inner = infer_size(p.ints, in.shape[dim]);
  } catch (const sy::Error&) {
    throw sy::Error("unflatten: provided sizes " + to_string(p.ints) + " don't multiply up to the size of dim " +
                    std::to_string(p.a) + " (" + std::to_string(in.shape[dim]) + ") in the input tensor");
  }
  Shape sizes(in.shape.begin(), in.shape.begin() + dim);
  sizes.insert(sizes.end(), inner.begin(), inner.end());
  sizes.insert(sizes.end(), in.shape.begin() + dim + 1, in.shape.end());
  return {view_to(in, sizes, false)};
}

Geometries permute(const Geometry& in, const Params& p, const Shape*) {
  require(p.ints_given, "dims");
  const int64_t n = static_cast<int64_t>(in.shape.size());
  if (static_cast<int64_t>(p.ints.size()) != n)
    throw sy::Error("permute: number of dims don't match (input has " + std::to_string(n) + ", dims " +
                    to_string(p.ints) + ")");
  Geometry out = in;
  std::vector<bool> seen(n, false);
  for (int64_t i = 0; i < n; ++i) {
    int64_t d = wrap_dim(p.ints[i], n, "permute");
    if (seen[d]) throw sy::Error("permute: duplicate dims are not allowed");
    seen[d] = true;
    out.shape[i] = in.shape[d];
    out.strides[i] = in.strides[d];
  }
  return {out};
}

Geometry swap(const Geometry& in, int64_t d0, int64_t d1) {
  Geometry out = in;
  if (in.shape.empty()) return out;  // 0-dim: dims 0/-1 only, nothing to swap
  std::swap(out.shape[d0], out.shape[d1]);
  std::swap(out.strides[d0], out.strides[d1]);
  return out;
}

Geometries transpose(const Geometry& in, const Params& p, const Shape*) {
  require(p.has_a, "dim0");
  require(p.has_b, "dim1");
  const int64_t n = static_cast<int64_t>(in.shape.size());
  return {swap(in, wrap_dim(p.a, n, "transpose"), wrap_dim(p.b, n, "transpose"))};
}

Geometries t(const Geometry& in, const Params&, const Shape*) {
  if (in.shape.size() > 2)
    throw sy::Error("t() expects a tensor with <= 2 dimensions, but self is " + std::to_string(in.shape.size()) + "D");
  return {in.shape.size() < 2 ? in : swap(in, 0, 1)};
}

Geometry expand_to(const Geometry& in, const Shape& sizes) {
  const size_t n = in.shape.size(), m = sizes.size();
  if (m < n)
    throw sy::Error("expand: the number of sizes provided (" + std::to_string(m) +
                    ") must be greater or equal "
                    "to the number of dimensions in the tensor (" +
                    std::to_string(n) + ")");
  Geometry out;
  out.offset = in.offset;
  out.shape.resize(m);
  out.strides.resize(m);
  for (size_t i = 0; i < m; ++i) {
    const int64_t target = sizes[i];
    if (i < m - n) {  // a new leading dim
      if (target < 0)
        throw sy::Error("expand: the expanded size of the tensor (" + std::to_string(target) +
                        ") isn't allowed in a leading, non-existing dimension " + std::to_string(i));
      out.shape[i] = target;
      out.strides[i] = 0;
      continue;
    }
    const size_t d = i - (m - n);
    const int64_t size = target == -1 ? in.shape[d] : target;
    if (size < 0) throw sy::Error("expand: invalid size " + std::to_string(target));
    if (in.shape[d] != size && in.shape[d] != 1)
      throw sy::Error("expand: the expanded size of the tensor (" + std::to_string(size) +
                      ") must match the "
                      "existing size (" +
                      std::to_string(in.shape[d]) + ") at non-singleton dimension " + std::to_string(i) +
                      ".  Target sizes: " + to_string(sizes) + ".  Tensor sizes: " + to_string(in.shape));
    out.shape[i] = size;
    out.strides[i] = in.shape[d] == size ? in.strides[d] : 0;
  }
  return out;
}

Geometries expand(const Geometry& in, const Params& p, const Shape*) {
  require(p.ints_given, "size");
  return {expand_to(in, p.ints)};
}
Geometries expand_as(const Geometry& in, const Params&, const Shape* other) { return {expand_to(in, *other)}; }

Geometry slice_dim(const Geometry& in, int64_t dim, int64_t start, int64_t length, int64_t step) {
  Geometry out = in;
  out.offset += start * in.strides[dim];
  out.shape[dim] = (length + step - 1) / step;
  out.strides[dim] *= step;
  return out;
}

Geometries slice(const Geometry& in, const Params& p, const Shape*) {
  if (in.shape.empty()) throw sy::Error("slice() cannot be applied to a 0-dim tensor");
  const int64_t dim = wrap_dim(p.has_a ? p.a : 0, static_cast<int64_t>(in.shape.size()), "slice");
  const int64_t step = p.has_c ? p.c : 1, size = in.shape[dim];
  if (step <= 0) throw sy::Error("slice step must be positive, got " + std::to_string(step));
  // ATen's clamping: negatives count from the end, then both ends are clamped to [0, size].
  int64_t start = p.has_b ? p.b : 0;
  int64_t end = p.ints_given && !p.ints.empty() ? p.ints[0] : size;
  if (start < 0) start += size;
  if (end < 0) end += size;
  start = std::clamp<int64_t>(start, 0, size);
  end = std::clamp<int64_t>(end, start, size);
  return {slice_dim(in, dim, start, end - start, step)};
}

// slice's start/end are `SymInt?`: None, or an int; end = INT64_MAX means "to the end".
// a = dim, b = start, c = step, ints = {end}.
Params parse_slice(const sy::Node& n) {
  Params p = read(n, nullptr, "dim", "start", "step");
  if (n.attrs.has("end")) p.ints = {n.attrs.i("end")}, p.ints_given = true;
  return p;
}

Geometries narrow(const Geometry& in, const Params& p, const Shape*) {
  require(p.has_a, "dim");
  require(p.has_b, "start");
  require(p.has_c, "length");
  if (in.shape.empty()) throw sy::Error("narrow() cannot be applied to a 0-dim tensor");
  const int64_t dim = wrap_dim(p.a, static_cast<int64_t>(in.shape.size()), "narrow");
  const int64_t size = in.shape[dim], length = p.c;
  int64_t start = p.b;
  if (length < 0) throw sy::Error("narrow(): length must be non-negative");
  if (start < -size || start > size)
    throw sy::Error("narrow(): start out of range (expected to be in range of [" + std::to_string(-size) + ", " +
                    std::to_string(size) + "], but got " + std::to_string(start) + ")");
  if (start < 0) start += size;
  if (start > size - length)
    throw sy::Error("narrow(): start (" + std::to_string(start) + ") + length (" + std::to_string(length) +
                    ") exceeds dimension size (" + std::to_string(size) + ")");
  return {slice_dim(in, dim, start, length, 1)};
}

Geometries select(const Geometry& in, const Params& p, const Shape*) {
  require(p.has_a, "dim");
  require(p.has_b, "index");
  if (in.shape.empty()) throw sy::Error("select() cannot be applied to a 0-dim tensor");
  const int64_t dim = wrap_dim(p.a, static_cast<int64_t>(in.shape.size()), "select");
  const int64_t size = in.shape[dim];
  if (p.b < -size || p.b >= size)
    throw sy::Error("select(): index " + std::to_string(p.b) + " out of range for tensor of size " +
                    to_string(in.shape) + " at dimension " + std::to_string(p.a));
  const int64_t index = p.b < 0 ? p.b + size : p.b;
  Geometry out = drop_dim(in, dim);
  out.offset += index * in.strides[dim];
  return {out};
}

Geometries squeeze(const Geometry& in, const Params& p, const Shape*) {
  const int64_t n = static_cast<int64_t>(in.shape.size());
  if (p.has_a) {
    const int64_t dim = wrap_dim(p.a, n, "squeeze");
    return {n == 0 || in.shape[dim] != 1 ? in : drop_dim(in, dim)};
  }
  Geometry out = in;
  out.shape.clear(), out.strides.clear();
  for (int64_t d = 0; d < n; ++d)
    if (in.shape[d] != 1) out.shape.push_back(in.shape[d]), out.strides.push_back(in.strides[d]);
  return {out};
}

Geometries unsqueeze(const Geometry& in, const Params& p, const Shape*) {
  require(p.has_a, "dim");
  const int64_t n = static_cast<int64_t>(in.shape.size());
  const int64_t dim = wrap_dim(p.a, n + 1, "unsqueeze");
  Geometry out = in;
  const int64_t stride = dim < n ? in.shape[dim] * in.strides[dim] : 1;
  out.shape.insert(out.shape.begin() + dim, 1);
  out.strides.insert(out.strides.begin() + dim, stride);
  return {out};
}

Geometries identity(const Geometry& in, const Params&, const Shape*) { return {in}; }

// aten::to that changes nothing (the input's own dtype, no copy): PyTorch returns the
// tensor itself. A conversion, a copy or a device argument is left to the next backend.
Params parse_to(const sy::Node& n) {
  DLDataType want{};
  if (!n.attrs.has("dtype") || !sy::to_dl_dtype(static_cast<sy::AtenScalarType>(n.attrs.i("dtype")), &want))
    throw sy::Unsupported("aten::to without a dtype (the device and tensor overloads are left to other backends)");
  if (!sy::same_dtype(want, n.input(0).dtype)) throw sy::Unsupported("a dtype conversion");
  if (n.attrs.i("copy", 0) != 0) throw sy::Unsupported("copy=True");
  if (n.attrs.i("memory_format", 1) != 1)  // c10::MemoryFormat::Preserve (or None)
    throw sy::Unsupported("a memory_format other than preserve_format");
  return {};
}

Params parse_contiguous(const sy::Node& n) {
  const int64_t format = n.attrs.i("memory_format", 0);
  if (format != 0)  // c10::MemoryFormat::Contiguous
    throw sy::Unsupported("memory_format " + std::to_string(format) + " is not supported (only contiguous_format)");
  return {};
}

Geometries contiguous(const Geometry& in, const Params&, const Shape*) {
  if (is_contiguous(in)) return {in};
  Geometry out = in;
  out.strides = contiguous_strides(in.shape);
  out.copy = true;
  return {out};
}

// ---- splits: every piece is a view -----------------------------------------------------

Geometries pieces(const Geometry& in, int64_t dim, const Shape& sizes) {
  Geometries out;
  int64_t start = 0;
  for (int64_t size : sizes) {
    out.push_back(slice_dim(in, dim, start, size, 1));
    start += size;
  }
  return out;
}

int64_t split_dim(const Geometry& in, const Params& p, const char* op) {
  if (in.shape.empty()) throw sy::Error(std::string(op) + " expects at least a 1-dimensional tensor");
  return wrap_dim(p.has_a ? p.a : 0, static_cast<int64_t>(in.shape.size()), op);
}

Shape equal_pieces(int64_t dim_size, int64_t split_size) {
  if (split_size < 0)
    throw sy::Error("split expects split_size be non-negative, but got split_size=" + std::to_string(split_size));
  if (split_size == 0 && dim_size != 0)
    throw sy::Error("split_size can only be 0 if dimension size is 0, but got dimension size of " +
                    std::to_string(dim_size));
  const int64_t count = split_size == 0 ? 1 : std::max<int64_t>((dim_size + split_size - 1) / split_size, 1);
  Shape sizes(count, split_size);
  sizes.back() = split_size - (split_size * count - dim_size);
  return sizes;
}

Geometries split_sizes(const Geometry& in, const Params& p, int64_t dim) {
  int64_t total = 0;
  for (int64_t s : p.ints) {
    if (s < 0)
      throw sy::Error("split_with_sizes expects split_sizes have only non-negative entries, but got " +
                      to_string(p.ints));
    total += s;
  }
  if (total != in.shape[dim])
    throw sy::Error("split_with_sizes expects split_sizes to sum exactly to " + std::to_string(in.shape[dim]) +
                    " (input tensor's size at dimension " + std::to_string(dim) +
                    "), but got split_sizes=" + to_string(p.ints));
  return pieces(in, dim, p.ints);
}

// aten::split: `split_size` is an int (split.Tensor) or an int list (split.sizes).
Params parse_split(const sy::Node& n) {
  Params p = read(n, nullptr, "dim");
  if (n.attrs.kind("split_size") == SY_ATTR_INT)
    p.b = n.attrs.i("split_size"), p.has_b = true;
  else
    p = read(n, "split_size", "dim");
  return p;
}

Geometries split(const Geometry& in, const Params& p, const Shape*) {
  const int64_t dim = split_dim(in, p, "split");
  if (p.has_b) return pieces(in, dim, equal_pieces(in.shape[dim], p.b));
  require(p.ints_given, "split_size");
  return split_sizes(in, p, dim);
}

Geometries split_with_sizes(const Geometry& in, const Params& p, const Shape*) {
  require(p.ints_given, "split_sizes");
  return split_sizes(in, p, split_dim(in, p, "split_with_sizes"));
}

Geometries chunk(const Geometry& in, const Params& p, const Shape*) {
  require(p.has_b, "chunks");
  const int64_t dim = split_dim(in, p, "chunk"), chunks = p.b, size = in.shape[dim];
  if (chunks <= 0) throw sy::Error("chunk expects `chunks` to be greater than 0, got: " + std::to_string(chunks));
  const int64_t split_size = (size + chunks - 1) / chunks;
  // An empty dim still gives `chunks` (empty) pieces, as ATen does.
  if (split_size == 0 && size == 0) return pieces(in, dim, Shape(chunks, 0));
  return pieces(in, dim, equal_pieces(size, split_size));
}

Geometries unbind(const Geometry& in, const Params& p, const Shape*) {
  const int64_t dim = split_dim(in, p, "unbind");
  Geometries out;
  for (int64_t i = 0; i < in.shape[dim]; ++i) {
    Geometry g = drop_dim(in, dim);
    g.offset += i * in.strides[dim];
    out.push_back(g);
  }
  return out;
}

}  // namespace

const std::vector<ViewOp>& view_ops() {
  static const std::vector<ViewOp> table = {
      {"aten::view", "size", 1, false, [](const sy::Node& n) { return read(n, "size"); }, view},
      {"aten::reshape", "shape", 1, false, [](const sy::Node& n) { return read(n, "shape"); }, reshape, true},
      {"aten::view_as", "", 2, false, none, view_as},
      {"aten::reshape_as", "", 2, false, none, reshape_as, true},
      {"aten::flatten", "start_dim end_dim", 1, false,
       [](const sy::Node& n) { return read(n, nullptr, "start_dim", "end_dim"); }, flatten, true},
      {"aten::unflatten", "dim sizes", 1, false, [](const sy::Node& n) { return read(n, "sizes", "dim"); }, unflatten},
      {"aten::permute", "dims", 1, false, [](const sy::Node& n) { return read(n, "dims"); }, permute},
      {"aten::transpose", "dim0 dim1", 1, false, [](const sy::Node& n) { return read(n, nullptr, "dim0", "dim1"); },
       transpose},
      {"aten::t", "", 1, false, none, t},
      // `implicit` only matters to autograd tracing.
      {"aten::expand", "size implicit", 1, false, [](const sy::Node& n) { return read(n, "size"); }, expand},
      {"aten::expand_as", "", 2, false, none, expand_as},
      {"aten::broadcast_to", "size", 1, false, [](const sy::Node& n) { return read(n, "size"); }, expand},
      {"aten::slice", "dim start end step", 1, false, parse_slice, slice},
      {"aten::narrow", "dim start length", 1, false,
       [](const sy::Node& n) { return read(n, nullptr, "dim", "start", "length"); }, narrow},
      {"aten::select", "dim index", 1, false, [](const sy::Node& n) { return read(n, nullptr, "dim", "index"); },
       select},
      {"aten::squeeze", "dim", 1, false, [](const sy::Node& n) { return read(n, nullptr, "dim"); }, squeeze},
      {"aten::unsqueeze", "dim", 1, false, [](const sy::Node& n) { return read(n, nullptr, "dim"); }, unsqueeze},
      {"aten::alias", "", 1, false, none, identity},
      {"aten::detach", "", 1, false, none, identity},
      {"aten::to", "dtype non_blocking copy memory_format", 1, false, parse_to, identity},
      {"aten::contiguous", "memory_format", 1, false, parse_contiguous, contiguous, true},
      {"aten::split", "split_size dim", 1, true, parse_split, split},
      {"aten::split_with_sizes", "split_sizes dim", 1, true,
       [](const sy::Node& n) { return read(n, "split_sizes", "dim"); }, split_with_sizes},
      {"aten::chunk", "chunks dim", 1, true, [](const sy::Node& n) { return read(n, nullptr, "dim", "chunks"); },
       chunk},
      {"aten::unbind", "dim", 1, true, [](const sy::Node& n) { return read(n, nullptr, "dim"); }, unbind},
  };
  return table;
}

}  // namespace sy_shape
