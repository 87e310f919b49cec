// Conformance cases for the shape family: views (view, reshape, permute, transpose,
// expand, slice, select, squeeze, ...), copies (contiguous, cat, stack) and splits
// (split, chunk, unbind: one node output per piece), and embedding's gather of rows. Shapes come from the zoo's
// transformers and CNN heads, plus odd and edge sizes (empty, 0-dim, size-1 dims),
// negative dims and indices, and non-contiguous inputs (transposed, strided rows,
// broadcast). The ops move elements without arithmetic, so every dtype gets the same
// cases.
#include "case_makers.hpp"
#include "families.hpp"

#include <switchyard/aten_dtype.hpp>

#include <limits>

namespace switchyard::conformance {

namespace {

using Shape = std::vector<int64_t>;

// Cases for one op at one dtype; `make` fills them through add().
class Cases {
 public:
  Cases(DLDataType dtype, uint32_t seed) : dtype_(dtype), rng_(seed) {}

  DLDataType dtype() const { return dtype_; }
  Tensor t(Shape shape) { return random_tensor(rng_, dtype_, std::move(shape), -8, 8); }
  Tensor transposed(Shape shape) { return transposed_layout(t(std::move(shape))); }
  Tensor rows(Shape shape) { return strided_rows(rng_, dtype_, std::move(shape)); }
  // `shape` with its leading dims broadcast (stride 0) from a tensor of the rest.
  Tensor broadcast(Shape shape, size_t leading) {
    Tensor base = t(Shape(shape.begin() + static_cast<std::ptrdiff_t>(leading), shape.end()));
    Shape strides = base.strides();
    strides.insert(strides.begin(), leading, 0);
    Tensor view = Tensor::from_blob(base.raw_data(), dtype_, std::move(shape), std::move(strides));
    view.keep_alive(base.owner());
    return view;
  }

  // A view into `base`'s memory (its dtype) with the given geometry, in elements.
  Tensor view_of(const Tensor& base, Shape shape, Shape strides, int64_t offset = 0) {
    char* data = static_cast<char*>(base.raw_data()) + offset * static_cast<int64_t>(dtype_size(dtype_));
    Tensor view = Tensor::from_blob(data, dtype_, std::move(shape), std::move(strides));
    view.keep_alive(base.owner());
    return view;
  }

  void add(std::string label, std::vector<Tensor> inputs, Attributes attrs = {}, size_t outputs = 1) {
    Case c;
    c.label = std::move(label);
    for (Tensor& x : inputs) c.inputs.emplace_back(std::move(x));
    c.attrs = std::move(attrs);
    c.num_outputs = outputs;
    c.atol = 0, c.rtol = 0;  // elements are moved, never computed: exact
    cases_.push_back(std::move(c));
  }
  std::vector<Case> take() { return std::move(cases_); }

 private:
  DLDataType dtype_;
  Rng rng_;
  std::vector<Case> cases_;
};

using Maker = void (*)(Cases&);

void add(CaseTable& table, const char* op, uint32_t seed, Maker make) {
  table.add(op, [seed, make](DLDataType dtype) {
    Cases c(dtype, seed);
    make(c);
    return c.take();
  });
}

constexpr int64_t kEnd = std::numeric_limits<int64_t>::max();  // TorchScript's "to the end"

// ---- views ----------------------------------------------------------------------------------

void view(Cases& c) {
  c.add("ViT heads [197, 2, 768] -> [197, -1, 64]", {c.t({197, 2, 768})}, {{"size", ints({197, -1, 64})}});
  c.add("GPT [2, 64, 128] -> [-1, 128]", {c.t({2, 64, 128})}, {{"size", ints({-1, 128})}});
  c.add("BERT mask [2, 48] -> [-1, 1, 1, 48]", {c.t({2, 48})}, {{"size", ints({-1, 1, 1, 48})}});
  c.add("to 0-dim", {c.t({1, 1})}, {{"size", ints({})}});
  c.add("empty [0, 6] -> [3, 0, 2]", {c.t({0, 6})}, {{"size", ints({3, 0, 2})}});
  c.add("strided rows [4, 6] -> [2, 2, 6]", {c.rows({4, 6})}, {{"size", ints({2, 2, 6})}});
  c.add("transposed [5, 3, 4] split batch", {c.transposed({6, 3, 4})}, {{"size", ints({2, 3, 3, 4})}});
}

void reshape(Cases& c) {
  c.add("ViT [2, 768, 14, 14] -> [-1, 768, 196]", {c.t({2, 768, 14, 14})}, {{"shape", ints({-1, 768, 196})}});
  c.add("BERT [2, 4, 48, 48] -> [-1, 1, 48]", {c.t({2, 4, 48, 48})}, {{"shape", ints({-1, 1, 48})}});
  c.add("transposed (copies)", {c.transposed({5, 7})}, {{"shape", ints({-1})}});
  c.add("transposed, viewable", {c.transposed({4, 5, 3})}, {{"shape", ints({2, 2, 5, 3})}});
  c.add("0-dim -> [1, 1]", {c.t({})}, {{"shape", ints({1, 1})}});
}

void view_as(Cases& c) {
  c.add("[4, 6] as [2, 12]", {c.t({4, 6}), c.t({2, 12})});
  c.add("[3, 1, 5] as [15]", {c.t({3, 1, 5}), c.t({15})});
}

void reshape_as(Cases& c) {
  c.add("transposed [6, 4] as [3, 8]", {c.transposed({6, 4}), c.t({3, 8})});
  c.add("[2, 3] as [6, 1]", {c.t({2, 3}), c.t({6, 1})});
}

void flatten(Cases& c) {
  c.add("CNN head [2, 512, 1, 1] from dim 1", {c.t({2, 512, 1, 1})},
        {{"start_dim", integer(1)}, {"end_dim", integer(-1)}});
  c.add("all dims [2, 3, 4]", {c.t({2, 3, 4})}, {{"start_dim", integer(0)}, {"end_dim", integer(-1)}});
  c.add("middle dims, negative", {c.t({2, 3, 4, 5})}, {{"start_dim", integer(-3)}, {"end_dim", integer(2)}});
  c.add("start == end", {c.t({2, 3})}, {{"start_dim", integer(1)}, {"end_dim", integer(1)}});
  c.add("0-dim", {c.t({})});
  c.add("transposed (copies)", {c.transposed({3, 4, 5})}, {{"start_dim", integer(1)}});
}

void unflatten(Cases& c) {
  c.add("[2, 12] dim 1 -> [3, 4]", {c.t({2, 12})}, {{"dim", integer(1)}, {"sizes", ints({3, 4})}});
  c.add("dim -1 -> [-1, 2]", {c.t({3, 8})}, {{"dim", integer(-1)}, {"sizes", ints({-1, 2})}});
  c.add("transposed, dim 0", {c.transposed({6, 5})}, {{"dim", integer(0)}, {"sizes", ints({2, 3})}});
}

void permute(Cases& c) {
  c.add("ViT patches [2, 768, 196] (0, 2, 1)", {c.t({2, 768, 196})}, {{"dims", ints({0, 2, 1})}});
  c.add("heads [2, 9, 4, 8] (0, 2, 1, 3)", {c.t({2, 9, 4, 8})}, {{"dims", ints({0, 2, 1, 3})}});
  c.add("negative dims", {c.t({2, 3, 4})}, {{"dims", ints({-1, -3, -2})}});
  c.add("0-dim", {c.t({})}, {{"dims", ints({})}});
  c.add("transposed input", {c.transposed({3, 5, 2})}, {{"dims", ints({2, 1, 0})}});
}

void transpose(Cases& c) {
  c.add("attention [64, 8, 32] (0, 1)", {c.t({64, 8, 32})}, {{"dim0", integer(0)}, {"dim1", integer(1)}});
  c.add("scores [8, 64, 32] (-2, -1)", {c.t({8, 64, 32})}, {{"dim0", integer(-2)}, {"dim1", integer(-1)}});
  c.add("same dim", {c.t({3, 4})}, {{"dim0", integer(1)}, {"dim1", integer(1)}});
  c.add("0-dim", {c.t({})}, {{"dim0", integer(0)}, {"dim1", integer(-1)}});
  c.add("strided rows", {c.rows({5, 6})}, {{"dim0", integer(1)}, {"dim1", integer(0)}});
}

void t(Cases& c) {
  c.add("[3, 7]", {c.t({3, 7})});
  c.add("1-D", {c.t({5})});
  c.add("0-dim", {c.t({})});
}

void expand(Cases& c) {
  c.add("ViT class token [1, 1, 768] -> [2, -1, 768]", {c.t({1, 1, 768})},
        {{"size", ints({2, -1, 768})}, {"implicit", integer(0)}});
  c.add("BERT mask [2, 1, 1, 48] -> [-1, 4, -1, -1]", {c.t({2, 1, 1, 48})}, {{"size", ints({-1, 4, -1, -1})}});
  c.add("new leading dims", {c.t({3, 1})}, {{"size", ints({2, 2, 3, 5})}});
  c.add("0-dim -> [4]", {c.t({})}, {{"size", ints({4})}});
  c.add("transposed input", {c.transposed({1, 3})}, {{"size", ints({4, 1, 3})}});
}

void expand_as(Cases& c) {
  c.add("[1, 1, 768] as [2, 1, 768]", {c.t({1, 1, 768}), c.t({2, 1, 768})});
  c.add("[3, 1] as [2, 3, 4]", {c.t({3, 1}), c.t({2, 3, 4})});
}

void broadcast_to(Cases& c) {
  c.add("[3, 1] -> [2, 3, 6]", {c.t({3, 1})}, {{"size", ints({2, 3, 6})}});
  c.add("[4] -> [3, -1]", {c.t({4})}, {{"size", ints({3, -1})}});
}

void slice(Cases& c) {
  c.add("zoo: dim 0, [0, end)", {c.t({2, 197, 8})},
        {{"dim", integer(0)}, {"start", integer(0)}, {"end", integer(kEnd)}, {"step", integer(1)}});
  c.add("negative start/end", {c.t({5, 6})}, {{"dim", integer(1)}, {"start", integer(-4)}, {"end", integer(-1)}});
  c.add("out-of-range clamped", {c.t({5, 6})},
        {{"dim", integer(-1)}, {"start", integer(-100)}, {"end", integer(100)}, {"step", integer(2)}});
  c.add("end before start: empty", {c.t({5, 6})}, {{"dim", integer(0)}, {"start", integer(4)}, {"end", integer(2)}});
  c.add("start past the end: empty", {c.t({5, 6})}, {{"dim", integer(0)}, {"start", integer(7)}, {"end", integer(9)}});
  c.add("step 3, None bounds", {c.t({10, 3})}, {{"start", none()}, {"end", none()}, {"step", integer(3)}});
  c.add("transposed input", {c.transposed({6, 5})},
        {{"dim", integer(1)}, {"start", integer(1)}, {"end", integer(5)}, {"step", integer(2)}});
}

void narrow(Cases& c) {
  c.add("[4, 6] dim 1 start 2 length 3", {c.t({4, 6})},
        {{"dim", integer(1)}, {"start", integer(2)}, {"length", integer(3)}});
  c.add("negative start", {c.t({4, 6})}, {{"dim", integer(-2)}, {"start", integer(-3)}, {"length", integer(2)}});
  c.add("length 0 at the end", {c.t({4, 6})}, {{"dim", integer(0)}, {"start", integer(4)}, {"length", integer(0)}});
}

void select(Cases& c) {
  c.add("ViT class token [2, 197, 8] dim 1 index 0", {c.t({2, 197, 8})}, {{"dim", integer(1)}, {"index", integer(0)}});
  c.add("negative index", {c.t({3, 4, 2})}, {{"dim", integer(0)}, {"index", integer(-1)}});
  c.add("negative dim, transposed", {c.transposed({3, 4, 5})}, {{"dim", integer(-1)}, {"index", integer(2)}});
  c.add("1-D -> 0-dim", {c.t({7})}, {{"dim", integer(0)}, {"index", integer(3)}});
}

void squeeze(Cases& c) {
  c.add("all size-1 dims", {c.t({2, 1, 3, 1})});
  c.add("dim 1", {c.t({2, 1, 3, 1})}, {{"dim", integer(1)}});
  c.add("dim -1", {c.t({2, 1, 3, 1})}, {{"dim", integer(-1)}});
  c.add("dim of size 3: no-op", {c.t({2, 1, 3, 1})}, {{"dim", integer(2)}});
  c.add("[1, 1] -> 0-dim", {c.t({1, 1})});
  c.add("0-dim", {c.t({})}, {{"dim", integer(0)}});
}

void unsqueeze(Cases& c) {
  c.add("BERT [2, 48] dim -1", {c.t({2, 48})}, {{"dim", integer(-1)}});
  c.add("dim 0", {c.t({3, 4})}, {{"dim", integer(0)}});
  c.add("middle, transposed", {c.transposed({3, 4})}, {{"dim", integer(1)}});
  c.add("0-dim", {c.t({})}, {{"dim", integer(0)}});
  c.add("dim -(n+1)", {c.t({3, 4})}, {{"dim", integer(-3)}});
}

void identity(Cases& c) {
  c.add("[3, 4]", {c.t({3, 4})});
  c.add("transposed", {c.transposed({3, 4})});
  c.add("0-dim", {c.t({})});
}

// aten::to with the input's own dtype: PyTorch returns the tensor itself.
void to_same_dtype(Cases& c) {
  sy::AtenScalarType code{};
  if (!sy::to_scalar_type(c.dtype(), &code)) return;
  const Attributes attrs{
      {"dtype", integer(static_cast<int>(code))}, {"non_blocking", integer(0)}, {"copy", integer(0)}};
  c.add("[3, 4]", {c.t({3, 4})}, attrs);
  c.add("transposed", {c.transposed({3, 4})}, attrs);
  c.add("0-dim", {c.t({})}, attrs);
}

// ---- copies ---------------------------------------------------------------------------------

void contiguous(Cases& c) {
  c.add("already contiguous", {c.t({4, 5})}, {{"memory_format", integer(0)}});
  // the zoo's decomposed attention: a chunk of the fused QKV projection, rows with gaps
  c.add("QKV chunk [64, 2, 128] of [64, 2, 384]", {c.view_of(c.t({64, 2, 384}), {64, 2, 128}, {768, 384, 1}, 128)});
  // ... and a bmm output [B*H, T, D] seen transposed as [T, B*H, D]
  c.add("transposed bmm [48, 8, 32]", {c.view_of(c.t({8, 48, 32}), {48, 8, 32}, {32, 48 * 32, 1})});
  c.add("ViT patches [2, 196, 64] from [2, 64, 196]", {c.view_of(c.t({2, 64, 196}), {2, 196, 64}, {64 * 196, 1, 196})});
  c.add("strided rows [9, 40]", {c.rows({9, 40})});
  c.add("broadcast rows [4, 7]", {c.broadcast({4, 7}, 1)});
  c.add("broadcast innermost [5, 6]", {c.view_of(c.t({5}), {5, 6}, {1, 0})});
  c.add("transposed [3, 2, 5, 7]", {c.transposed({3, 2, 5, 7})});
  c.add("0-dim", {c.t({})});
  c.add("empty", {c.t({0, 3})});
}

void cat(Cases& c) {
  c.add("ViT class token + patches, dim 1", {c.broadcast({2, 1, 64}, 1), c.t({2, 196, 64})}, {{"dim", integer(1)}});
  c.add("dim 0", {c.t({2, 3}), c.t({4, 3})}, {{"dim", integer(0)}});
  c.add("dim -1, three parts", {c.t({2, 3, 1}), c.t({2, 3, 4}), c.t({2, 3, 2})}, {{"dim", integer(-1)}});
  c.add("transposed and strided parts", {c.transposed({4, 5}), c.rows({4, 5})}, {{"dim", integer(1)}});
  c.add("one part", {c.t({3, 3})});
  c.add("empty 1-D parts are skipped", {c.t({0}), c.t({2, 3}), c.t({0})}, {{"dim", integer(1)}});
  c.add("empty part [0, 3]", {c.t({0, 3}), c.t({2, 3})}, {{"dim", integer(0)}});
  // image channels (an inception block's four branches, a fire module's two)
  c.add("inception block: four [2, _, 8, 8] branches, dim 1",
        {c.t({2, 16, 8, 8}), c.t({2, 24, 8, 8}), c.t({2, 8, 8, 8}), c.t({2, 8, 8, 8})}, {{"dim", integer(1)}});
  c.add("dim -3, odd sizes", {c.t({3, 5, 7, 9}), c.t({3, 3, 7, 9})}, {{"dim", integer(-3)}});
  Tensor whole = c.t({2, 16, 4, 4});
  c.add("a chunk's half (strided) beside a part, dim 1",
        {c.view_of(whole, {2, 8, 4, 4}, {256, 16, 4, 1}, 128), c.transposed({2, 6, 4, 4})}, {{"dim", integer(1)}});
  c.add("empty batch, dim 1", {c.t({0, 4, 3, 3}), c.t({0, 2, 3, 3})}, {{"dim", integer(1)}});
}

void stack(Cases& c) {
  c.add("dim 0", {c.t({2, 3}), c.t({2, 3}), c.t({2, 3})});
  c.add("dim -1", {c.t({2, 3}), c.transposed({2, 3})}, {{"dim", integer(-1)}});
  c.add("dim 1", {c.t({4, 5}), c.rows({4, 5})}, {{"dim", integer(1)}});
  c.add("0-dim parts", {c.t({}), c.t({})});
}

// aten::channel_shuffle (nn.ChannelShuffle) of one input.
void channel_shuffle(Cases& c) {
  c.add("[1, 12, 5, 7], 3 groups", {c.t({1, 12, 5, 7})}, {{"groups", integer(3)}});
  Tensor whole = c.t({2, 16, 4, 4});  // the second half of a chunk along channels: batches apart
  c.add("a chunk's half (strided), 4 groups", {c.view_of(whole, {2, 8, 4, 4}, {256, 16, 4, 1}, 128)},
        {{"groups", integer(4)}});
  c.add("one group: a copy", {c.transposed({6, 4, 2, 3})}, {{"groups", integer(1)}});
  c.add("empty batch", {c.t({0, 4, 3, 3})}, {{"groups", integer(2)}});
}

// switchyard::channel_shuffle: the host's pattern for ShuffleNet's cat + channel shuffle.
void channel_shuffle_of_parts(Cases& c) {
  c.add("ShuffleNet block: two [2, 24, 8, 8] parts, 2 groups", {c.t({2, 24, 8, 8}), c.t({2, 24, 8, 8})},
        {{"groups", integer(2)}});
  c.add("parts of 3, 4 and 5 channels across 3 groups", {c.t({2, 3, 3, 2}), c.t({2, 4, 3, 2}), c.t({2, 5, 3, 2})},
        {{"groups", integer(3)}});
  Tensor whole = c.t({2, 16, 4, 4});
  c.add("a chunk's half (strided) beside a part",
        {c.view_of(whole, {2, 8, 4, 4}, {256, 16, 4, 1}, 128), c.t({2, 8, 4, 4})}, {{"groups", integer(2)}});
  c.add("empty batch", {c.t({0, 4, 3, 3}), c.t({0, 4, 3, 3})}, {{"groups", integer(2)}});
  channel_shuffle(c);  // one part is a plain channel shuffle
}

// ---- splits (one output per piece) ------------------------------------------------------------

// ---- gathers -------------------------------------------------------------------------------

// Indices of `dtype` (int64 or int32) with the given values, shaped `shape`.
Tensor indices(std::vector<int64_t> values, Shape shape, DLDataType dtype = DLDataType{kDLInt, 64, 1}) {
  Tensor t = Tensor::empty(dtype, std::move(shape));
  for (size_t i = 0; i < values.size(); ++i) {
    if (dtype.bits == 64)
      t.data<int64_t>()[i] = values[i];
    else
      t.data<int32_t>()[i] = static_cast<int32_t>(values[i]);
  }
  return t;
}

std::vector<int64_t> spread(size_t n, int64_t rows) {  // n indices over [0, rows), both ends included
  std::vector<int64_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<int64_t>((i * 7919) % static_cast<size_t>(rows));
  if (n > 1) v[0] = 0, v[n - 1] = rows - 1;
  return v;
}

void embedding(Cases& c) {
  c.add("GPT tokens [1, 64] of a [1000, 128] table", {c.t({1000, 128}), indices(spread(64, 1000), {1, 64})});
  c.add("positions [64]", {c.t({64, 128}), indices(spread(64, 64), {64})});
  c.add("int32 indices [2, 3]", {c.t({10, 4}), indices({9, 0, 3, 3, 7, 1}, {2, 3}, DLDataType{kDLInt, 32, 1})});
  c.add("a transposed table (columns apart)", {c.transposed({12, 6}), indices({11, 0, 5}, {3})});
  c.add("a 0-dim index", {c.t({5, 3}), indices({4}, {})});
  c.add("no indices [0, 2]", {c.t({5, 3}), indices({}, {0, 2})});
}

void chunk(Cases& c) {
  c.add("QKV [64, 2, 384] into 3 on dim -1", {c.t({64, 2, 384})}, {{"chunks", integer(3)}, {"dim", integer(-1)}}, 3);
  c.add("uneven: 5 rows into 4 chunks gives 3", {c.t({5, 2})}, {{"chunks", integer(4)}}, 3);
  c.add("transposed, dim 1", {c.transposed({3, 6})}, {{"chunks", integer(2)}, {"dim", integer(1)}}, 2);
  c.add("empty dim: 3 empty chunks", {c.t({0, 2})}, {{"chunks", integer(3)}}, 3);
}

void split(Cases& c) {
  c.add("split_size 2 of 5", {c.t({5, 3})}, {{"split_size", integer(2)}}, 3);
  c.add("split_size 4, dim -1", {c.t({3, 8})}, {{"split_size", integer(4)}, {"dim", integer(-1)}}, 2);
  c.add("sizes [1, 0, 4]", {c.t({5, 3})}, {{"split_size", ints({1, 0, 4})}}, 3);
  c.add("split_size larger than the dim", {c.transposed({3, 4})}, {{"split_size", integer(9)}, {"dim", integer(1)}}, 1);
}

void split_with_sizes(Cases& c) {
  c.add("[3, 1] on dim 1", {c.t({2, 4})}, {{"split_sizes", ints({3, 1})}, {"dim", integer(1)}}, 2);
  c.add("[2, 2, 1], transposed", {c.transposed({5, 3})}, {{"split_sizes", ints({2, 2, 1})}}, 3);
}

void unbind(Cases& c) {
  c.add("dim 0", {c.t({3, 4})}, {}, 3);
  c.add("dim -1, transposed", {c.transposed({2, 4})}, {{"dim", integer(-1)}}, 4);
}

}  // namespace

void add_shape_cases(CaseTable& table) {
  add(table, "aten::view", 301, view);
  add(table, "aten::reshape", 302, reshape);
  add(table, "aten::view_as", 303, view_as);
  add(table, "aten::reshape_as", 304, reshape_as);
  add(table, "aten::flatten", 305, flatten);
  add(table, "aten::unflatten", 306, unflatten);
  add(table, "aten::permute", 307, permute);
  add(table, "aten::transpose", 308, transpose);
  add(table, "aten::t", 309, t);
  add(table, "aten::expand", 310, expand);
  add(table, "aten::expand_as", 311, expand_as);
  add(table, "aten::broadcast_to", 312, broadcast_to);
  add(table, "aten::slice", 313, slice);
  add(table, "aten::narrow", 314, narrow);
  add(table, "aten::select", 315, select);
  add(table, "aten::squeeze", 316, squeeze);
  add(table, "aten::unsqueeze", 317, unsqueeze);
  add(table, "aten::alias", 318, identity);
  add(table, "aten::detach", 319, identity);
  add(table, "aten::to", 328, to_same_dtype);
  add(table, "aten::contiguous", 320, contiguous);
  add(table, "aten::cat", 321, cat);
  add(table, "aten::concat", 322, cat);
  add(table, "aten::stack", 323, stack);
  add(table, "aten::chunk", 324, chunk);
  add(table, "aten::split", 325, split);
  add(table, "aten::split_with_sizes", 326, split_with_sizes);
  add(table, "aten::unbind", 327, unbind);
  add(table, "aten::embedding", 328, embedding);
  add(table, "aten::channel_shuffle", 329, channel_shuffle);
  add(table, "aten::native_channel_shuffle", 330, channel_shuffle);
  add(table, "switchyard::channel_shuffle", 331, channel_shuffle_of_parts);
}

}  // namespace switchyard::conformance
