// Conformance cases for the linalg family's ops (see cases.hpp): linear (and the fused
// linear+activation kernels), addmm, mm, matmul, bmm, baddbmm, einsum, at float32 and
// float64. Shapes from the zoo (BERT/GPT linears, ViT's MLP and attention, the resnet
// classifier), odd and edge sizes (0, 1), constant weights, transposed and strided
// operands that BLAS reads with a transpose flag or that need a copy, broadcasting. Then
// the recurrent layers, lstm, gru, rnn_tanh and rnn_relu: each cell in both directions,
// 1 to 3 layers, batch_first both ways, initial states given or zero, input views, nodes
// without the final states.
#include "case_makers.hpp"
#include "families.hpp"

#include <cmath>
#include <string>
#include <utility>
#include <vector>

namespace switchyard::conformance {

namespace {

bool is_f64(DLDataType t) { return t.code == kDLFloat && t.bits == 64 && t.lanes == 1; }

// Builds the cases of one op at one dtype.
class Maker {
 public:
  Maker(DLDataType dtype, uint32_t seed) : dtype_(dtype), rng_(seed) {}
  bool ok() const { return is_f32(dtype_) || is_f64(dtype_); }
  bool f32() const { return is_f32(dtype_); }

  Tensor t(std::vector<int64_t> shape, double lo = -1.0, double hi = 1.0) {
    return random_tensor(rng_, dtype_, std::move(shape), lo, hi);
  }
  Tensor transposed(std::vector<int64_t> shape) { return transposed_layout(t(std::move(shape))); }
  // Every other row (BLAS reads it with a larger leading dimension).
  Tensor rows(std::vector<int64_t> shape) { return strided_rows(rng_, dtype_, std::move(shape)); }
  // A 2-D [rows, cols] view of every other row and every other column: no BLAS leading
  // dimension describes it, so the kernel must copy (or prepare, if it is a constant).
  Tensor sparse(int64_t rows, int64_t cols) {
    Tensor storage = t({rows * 2, cols * 2});
    Tensor view = Tensor::from_blob(storage.raw_data(), dtype_, {rows, cols}, {cols * 4, 2});
    view.keep_alive(storage.owner());
    return view;
  }
  // A [d0, d1, ...] view of a [d1, d0, ...] tensor: the first two dims swapped in memory,
  // the rest contiguous (what nn.MultiheadAttention(batch_first=True) hands its projections).
  Tensor batch_first(std::vector<int64_t> shape) {
    std::vector<int64_t> swapped = shape;
    std::swap(swapped[0], swapped[1]);
    Tensor storage = t(swapped);
    std::vector<int64_t> strides = storage.strides();
    std::swap(strides[0], strides[1]);
    Tensor view = Tensor::from_blob(storage.raw_data(), dtype_, std::move(shape), strides);
    view.keep_alive(storage.owner());
    return view;
  }
  // `shape` expanded from a size-1 dimension `dim` (stride 0).
  Tensor expanded(std::vector<int64_t> shape, size_t dim) {
    std::vector<int64_t> one = shape;
    one[dim] = 1;
    Tensor storage = t(one);
    std::vector<int64_t> strides = storage.strides();
    strides[dim] = 0;
    Tensor view = Tensor::from_blob(storage.raw_data(), dtype_, std::move(shape), strides);
    view.keep_alive(storage.owner());
    return view;
  }

  // Adds a case; `constant` marks graph constants (weights), as in the zoo.
  Case& add(std::string label, std::vector<std::optional<Tensor>> inputs, std::vector<bool> constant = {},
            Attributes attrs = {}) {
    Case c;
    c.label = std::move(label);
    c.inputs = std::move(inputs);
    c.constant = std::move(constant);
    c.attrs = std::move(attrs);
    if (is_f64(dtype_)) c.atol = 1e-12, c.rtol = 1e-10;
    cases_.push_back(std::move(c));
    return cases_.back();
  }
  std::vector<Case> take() { return std::move(cases_); }

 private:
  DLDataType dtype_;
  Rng rng_;
  std::vector<Case> cases_;
};

// linear(input, weight, bias?) and the fused linear+<post> kernels: `post` holds the
// consumer's attributes ("post.approximate"); `range` widens the inputs so activations
// see both tails.
std::vector<Case> linear_cases(DLDataType dtype, const Attributes& post, double range, bool zoo_mlp) {
  Maker m(dtype, 21);
  if (!m.ok()) return {};
  const std::vector<bool> w = {false, true, true};  // weight and bias are constants
  auto with_post = [&](Attributes a) {
    a.insert(a.end(), post.begin(), post.end());
    return a;
  };
  auto add = [&](std::string label, std::vector<std::optional<Tensor>> in, std::vector<bool> constant = {}) {
    const int64_t k = in[0] && !in[0]->shape().empty() ? in[0]->shape().back() : 0;
    Case& c = m.add(std::move(label), std::move(in), std::move(constant), with_post({}));
    // float32 sums of k products differ between summation orders (blocked GEMMs, SIMD
    // widths) by about sqrt(k) roundings of partial sums that scale with the operands
    // (inputs in [-range, range], weights in [-1, 1]): the default atol fits k <= 256 at
    // range 1, and grows as that error does beyond (k = 2048: 2.8e-5; k = 768, range 3: 5.2e-5).
    if (is_f32(c.inputs[0]->dtype()) && k > 256) c.atol *= range * std::sqrt(static_cast<double>(k) / 256.0);
  };
  add("BERT linear [2, 48, 256] x [1024, 256]^T + bias",
      {m.t({2, 48, 256}, -range, range), m.t({1024, 256}), m.t({1024})}, w);
  add("GPT linear [1, 32, 128] x [384, 128]^T + bias", {m.t({1, 32, 128}, -range, range), m.t({384, 128}), m.t({384})},
      w);
  add("resnet fc [1, 512] x [1000, 512]^T + bias (one row: GEMV)",
      {m.t({1, 512}, -range, range), m.t({1000, 512}), m.t({1000})}, w);
  add("resnet fc batch 4 [4, 2048] x [1000, 2048]^T", {m.t({4, 2048}, -range, range), m.t({1000, 2048}), m.t({1000})},
      w);
  if (zoo_mlp && m.f32())
    add("ViT MLP [197, 768] x [3072, 768]^T + bias", {m.t({197, 768}, -range, range), m.t({3072, 768}), m.t({3072})},
        w);
  add("several epilogue row blocks [600, 64] x [2048, 64]^T",
      {m.t({600, 64}, -range, range), m.t({2048, 64}), m.t({2048})}, w);
  add("odd sizes [7, 13] x [11, 13]^T", {m.t({7, 13}, -range, range), m.t({11, 13}), m.t({11})}, w);
  add("1-D input [64]", {m.t({64}, -range, range), m.t({10, 64}), m.t({10})}, w);
  add("no bias (two inputs)", {m.t({5, 16}, -range, range), m.t({6, 16})}, {false, true});
  add("bias slot absent", {m.t({5, 16}, -range, range), m.t({6, 16}), std::nullopt}, {false, true});
  add("0-D bias", {m.t({5, 16}, -range, range), m.t({6, 16}), m.t({})}, w);
  add("weight and bias as inputs", {m.t({5, 16}, -range, range), m.t({6, 16}), m.t({6})});
  add("transposed input", {m.transposed({9, 24}), m.t({12, 24}), m.t({12})}, w);
  add("transposed constant weight", {m.t({9, 24}, -range, range), m.transposed({12, 24}), m.t({12})}, w);
  add("transposed batched input [3, 9, 24]", {m.transposed({3, 9, 24}), m.t({12, 24}), m.t({12})}, w);
  add("strided rows input", {m.rows({9, 24}), m.t({12, 24}), m.t({12})}, w);
  add("every other row and column: input copied", {m.sparse(9, 24), m.t({12, 24}), m.t({12})}, w);
  add("every other row and column: constant weight prepared",
      {m.t({9, 24}, -range, range), m.sparse(12, 24), m.t({12})}, w);
  add("expanded input (stride 0 rows)", {m.expanded({6, 24}, 0), m.t({12, 24}), m.t({12})}, w);
  add("empty rows [0, 32]", {m.t({0, 32}), m.t({8, 32}), m.t({8})}, w);
  add("no outputs [4, 32] x [0, 32]^T", {m.t({4, 32}), m.t({0, 32}), m.t({0})}, w);
  add("k = 0: bias only", {m.t({4, 0}), m.t({8, 0}), m.t({8})}, w);
  add("1 x 1", {m.t({1, 1}, -range, range), m.t({1, 1}), m.t({1})}, w);
  return m.take();
}

// A transformer MLP, linear -> act -> linear, fused: input, weight1, bias1, then the
// second linear's weight2 and bias2 (its own inputs after its first). Shapes from the zoo,
// several row blocks (a hidden of 4096 floats a row takes 256 rows a block), strided input.
std::vector<Case> mlp_cases(DLDataType dtype, const Attributes& post) {
  Maker m(dtype, 23);
  if (!m.f32()) return {};
  // Weights scaled as trained layers are (variance 1 / fan-in), so that hidden values and
  // outputs stay of order one, as in a real MLP, however wide the hidden layer.
  auto weight = [&](int64_t out, int64_t in) {
    const double bound = std::sqrt(3.0 / static_cast<double>(in));
    return m.t({out, in}, -bound, bound);
  };
  auto add = [&](std::string label, std::vector<std::optional<Tensor>> in) {
    const int64_t k = in[0]->shape().back(), h = in[1]->shape()[0];
    const std::vector<bool> constant = {false, true, true, true, true};
    Case& c = m.add(std::move(label), std::move(in), constant, post);
    c.producer_inputs = 3;
    c.rest_inputs_to = 2;
    // Two GEMMs, each summing k (then h) products in another order than ATen's (see
    // linear_cases): the first's rounding reaches the second, which adds its own.
    c.atol *= std::sqrt(static_cast<double>(std::max<int64_t>(k, 256) + std::max<int64_t>(h, 256)) / 256.0);
  };
  add("BERT MLP [2, 48, 128] -> 256 -> 128",
      {m.t({2, 48, 128}, -3, 3), weight(256, 128), m.t({256}), weight(128, 256), m.t({128})});
  add("several row blocks and a short last one [600, 16] -> 4096 -> 5",
      {m.t({600, 16}, -3, 3), weight(4096, 16), m.t({4096}), weight(5, 4096), m.t({5})});
  add("transposed input [3, 9, 24] -> 40 -> 7",
      {m.transposed({3, 9, 24}), weight(40, 24), m.t({40}), weight(7, 40), m.t({7})});
  add("[T, B, E] view of a batch-first [9, 3, 24] input -> 40 -> 7",
      {m.batch_first({3, 9, 24}), weight(40, 24), m.t({40}), weight(7, 40), m.t({7})});
  add("no biases", {m.t({6, 24}, -3, 3), weight(40, 24), std::nullopt, weight(7, 40), std::nullopt});
  add("1-D input [24]", {m.t({24}, -3, 3), weight(40, 24), m.t({40}), weight(7, 40), m.t({7})});
  add("empty rows [0, 24]", {m.t({0, 24}), weight(40, 24), m.t({40}), weight(7, 40), m.t({7})});
  return m.take();
}

// A Llama MLP's gate and up (switchyard::swiglu, the host's pattern pass): silu(x Wg^T) *
// (x Wu^T), weights as trained layers are scaled; row blocks, a strided input, no rows.
std::vector<Case> swiglu_cases(DLDataType dtype) {
  Maker m(dtype, 29);
  if (!m.f32()) return {};
  auto weight = [&](int64_t out, int64_t in) {
    const double bound = std::sqrt(3.0 / static_cast<double>(in));
    return m.t({out, in}, -bound, bound);
  };
  auto add = [&](std::string label, std::vector<std::optional<Tensor>> in) {
    const int64_t k = in[0]->shape().back();
    Case& c = m.add(std::move(label), std::move(in), {false, true, true}, {});
    c.atol *= std::sqrt(static_cast<double>(std::max<int64_t>(k, 256)) / 256.0);  // as linear_cases
  };
  add("decoder [2, 7, 64] -> 172", {m.t({2, 7, 64}, -3, 3), weight(172, 64), weight(172, 64)});
  add("several row blocks [300, 16] -> 4096", {m.t({300, 16}, -3, 3), weight(4096, 16), weight(4096, 16)});
  add("transposed input [3, 9, 24] -> 40", {m.transposed({3, 9, 24}), weight(40, 24), weight(40, 24)});
  add("empty rows [0, 24]", {m.t({0, 24}), weight(40, 24), weight(40, 24)});
  return m.take();
}

// A projection split into pieces, linear -> chunk, fused: input, weight, bias; chunk's
// `post.chunks` and `post.dim`, one output per piece (aten::chunk's sizes: ceil(N / chunks)
// each, the last what is left).
std::vector<Case> linear_chunk_cases(DLDataType dtype) {
  Maker m(dtype, 28);
  if (!m.f32()) return {};
  auto add = [&](std::string label, std::vector<std::optional<Tensor>> in, int64_t chunks, int64_t dim, size_t pieces) {
    Case& c = m.add(std::move(label), std::move(in), {false, true, true},
                    {{"post.chunks", integer(chunks)}, {"post.dim", integer(dim)}});
    c.producer_inputs = 3;
    c.num_outputs = pieces;
  };
  add("GPT q, k, v [64, 1, 128] x [384, 128]^T, 3 pieces", {m.t({64, 1, 128}), m.t({384, 128}), m.t({384})}, 3, -1, 3);
  add("ViT q, k, v [197, 2, 96] x [288, 96]^T, dim 2", {m.t({197, 2, 96}), m.t({288, 96}), m.t({288})}, 3, 2, 3);
  add("transposed input [3, 9, 24]", {m.transposed({3, 9, 24}), m.t({36, 24}), m.t({36})}, 3, -1, 3);
  add("[T, B, E] view of a batch-first [9, 3, 24] input", {m.batch_first({3, 9, 24}), m.t({36, 24}), m.t({36})}, 3, -1,
      3);
  add("uneven: 10 features in 4 chunks (3, 3, 3, 1)", {m.t({5, 16}), m.t({10, 16}), m.t({10})}, 4, -1, 4);
  add("fewer pieces than chunks: 5 features in 4 chunks (2, 2, 1)", {m.t({5, 16}), m.t({5, 16}), m.t({5})}, 4, -1, 3);
  add("no bias", {m.t({7, 16}), m.t({12, 16}), std::nullopt}, 2, -1, 2);
  add("1-D input [24]", {m.t({24}), m.t({6, 24}), m.t({6})}, 3, 0, 3);
  add("empty rows [0, 24]", {m.t({0, 24}), m.t({6, 24}), m.t({6})}, 3, -1, 3);
  add("chunk along the rows (declined: not the features)", {m.t({6, 24}), m.t({12, 24}), m.t({12})}, 3, 0, 3);
  return m.take();
}

// The attention's weighted values put back in [T, B*H, D] order: bmm -> transpose(0, 1)
// -> contiguous, fused: bmm's self and mat2; `post.dim0`, `post.dim1`,
// `post2.memory_format`.
std::vector<Case> bmm_transpose_cases(DLDataType dtype) {
  Maker m(dtype, 29);
  if (!m.ok()) return {};
  auto add = [&](std::string label, Tensor a, Tensor b, int64_t d0, int64_t d1) {
    m.add(std::move(label), {std::move(a), std::move(b)}, {},
          {{"post.dim0", integer(d0)}, {"post.dim1", integer(d1)}, {"post2.memory_format", integer(0)}});
  };
  add("GPT values [4, 64, 64] x [4, 64, 32], dims 0, 1", m.t({4, 64, 64}), m.transposed({4, 64, 32}), 0, 1);
  if (m.f32()) add("ViT values [12, 197, 197] x [12, 197, 64]", m.t({12, 197, 197}), m.t({12, 197, 64}), 0, 1);
  add("dims 1, 0", m.t({3, 7, 5}), m.t({3, 5, 11}), 1, 0);
  add("dims -3, -2", m.t({3, 7, 5}), m.t({3, 5, 11}), -3, -2);
  add("transposed self", m.transposed({4, 9, 16}), m.t({4, 16, 9}), 0, 1);
  add("more batches than threads: [9, 6, 5] x [9, 5, 7]", m.t({9, 6, 5}), m.t({9, 5, 7}), 0, 1);
  add("one row per batch", m.t({3, 1, 5}), m.t({3, 5, 11}), 0, 1);
  add("one column per batch", m.t({3, 7, 5}), m.t({3, 5, 1}), 0, 1);
  add("batch 1", m.t({1, 7, 5}), m.t({1, 5, 11}), 0, 1);
  add("k = 0", m.t({2, 7, 0}), m.t({2, 0, 11}), 0, 1);
  add("empty batch", m.t({0, 7, 5}), m.t({0, 5, 11}), 0, 1);
  add("dims 1, 2 (declined: not the batch and the rows)", m.t({3, 7, 5}), m.t({3, 5, 11}), 1, 2);
  return m.take();
}

std::vector<Case> addmm_cases(DLDataType dtype) {
  Maker m(dtype, 22);
  if (!m.ok()) return {};
  auto ba = [](double beta, double alpha) { return Attributes{{"beta", number(beta)}, {"alpha", number(alpha)}}; };
  m.add("classifier: bias [1000], [4, 512] x constant [512, 1000]",
        {m.t({1000}), m.t({4, 512}), m.transposed({512, 1000})}, {true, false, true});
  m.add("self [M, N], beta 0.5, alpha 2", {m.t({6, 5}), m.t({6, 7}), m.t({7, 5})}, {}, ba(0.5, 2.0));
  m.add("self [M, N] over several epilogue row blocks", {m.t({600, 2048}), m.t({600, 8}), m.t({8, 2048})}, {},
        ba(0.5, 1.0));
  m.add("self [M, 1], int alpha -1", {m.t({6, 1}), m.t({6, 7}), m.t({7, 5})}, {}, {{"alpha", integer(-1)}});
  m.add("self 0-D", {m.t({}), m.t({6, 7}), m.t({7, 5})});
  m.add("beta 0: self ignored", {m.t({6, 5}), m.t({6, 7}), m.t({7, 5})}, {}, {{"beta", integer(0)}});
  m.add("transposed mat1 and mat2", {m.t({5}), m.transposed({6, 7}), m.transposed({7, 5})});
  m.add("strided mat1 (copied)", {m.t({5}), m.sparse(6, 7), m.t({7, 5})});
  m.add("one row (GEMV)", {m.t({5}), m.t({1, 7}), m.t({7, 5})});
  m.add("one column (GEMV)", {m.t({6, 1}), m.t({6, 7}), m.t({7, 1})});
  m.add("k = 0", {m.t({6, 5}), m.t({6, 0}), m.t({0, 5})}, {}, ba(2.0, 3.0));
  m.add("empty [0, 5]", {m.t({5}), m.t({0, 7}), m.t({7, 5})});
  return m.take();
}

std::vector<Case> mm_cases(DLDataType dtype) {
  Maker m(dtype, 23);
  if (!m.ok()) return {};
  m.add("[32, 48] x [48, 40]", {m.t({32, 48}), m.t({48, 40})});
  m.add("odd [13, 17] x [17, 11]", {m.t({13, 17}), m.t({17, 11})});
  m.add("transposed self", {m.transposed({13, 17}), m.t({17, 11})});
  m.add("transposed mat2", {m.t({13, 17}), m.transposed({17, 11})});
  m.add("both transposed", {m.transposed({13, 17}), m.transposed({17, 11})});
  m.add("every other row and column (copied)", {m.sparse(13, 17), m.sparse(17, 11)});
  m.add("constant mat2", {m.t({13, 17}), m.t({17, 11})}, {false, true});
  m.add("row x column [1, 9] x [9, 1]", {m.t({1, 9}), m.t({9, 1})});
  m.add("empty [0, 9] x [9, 4]", {m.t({0, 9}), m.t({9, 4})});
  m.add("k = 0 [3, 0] x [0, 4]", {m.t({3, 0}), m.t({0, 4})});
  return m.take();
}

std::vector<Case> matmul_cases(DLDataType dtype) {
  Maker m(dtype, 24);
  if (!m.ok()) return {};
  m.add("1-D x 1-D (dot)", {m.t({17}), m.t({17})});
  m.add("1-D x 2-D", {m.t({17}), m.t({17, 6})});
  m.add("1-D x 3-D", {m.t({17}), m.t({3, 17, 6})});
  m.add("2-D x 1-D", {m.t({5, 17}), m.t({17})});
  m.add("4-D x 1-D", {m.t({2, 3, 5, 17}), m.t({17})});
  m.add("2-D x 2-D", {m.t({5, 17}), m.t({17, 6})});
  m.add("3-D x 2-D (folds into one GEMM)", {m.t({4, 9, 17}), m.t({17, 6})});
  m.add("2-D x 3-D", {m.t({9, 17}), m.t({4, 17, 6})});
  m.add("batch broadcast [2, 1, 5, 8] x [3, 8, 4]", {m.t({2, 1, 5, 8}), m.t({3, 8, 4})});
  m.add("batch broadcast [1, 5, 8] x [3, 8, 4]", {m.t({1, 5, 8}), m.t({3, 8, 4})});
  m.add("attention scores [2, 4, 48, 32] x [2, 4, 32, 48] (transposed keys)",
        {m.t({2, 4, 48, 32}), m.transposed({2, 4, 32, 48})});
  m.add("transposed batched both", {m.transposed({3, 5, 8}), m.transposed({3, 8, 4})});
  m.add("expanded batch (stride 0)", {m.expanded({3, 5, 8}, 0), m.t({3, 8, 4})});
  m.add("every other row and column, 2-D", {m.sparse(5, 8), m.t({8, 4})});
  m.add("[1, 8] row with column stride 2 x [8, 4] (strided GEMV)", {m.sparse(1, 8), m.t({8, 4})});
  m.add("[5, 8] x [8, 1] column with row stride 4 (strided GEMV)", {m.t({5, 8}), m.sparse(8, 1)});
  m.add("constant 2-D right operand", {m.t({2, 5, 8}), m.t({8, 4})}, {false, true});
  m.add("empty batch [0, 5, 8] x [8, 4]", {m.t({0, 5, 8}), m.t({8, 4})});
  m.add("k = 0 [2, 5, 0] x [2, 0, 4]", {m.t({2, 5, 0}), m.t({2, 0, 4})});
  m.add("[1] x [1]", {m.t({1}), m.t({1})});
  return m.take();
}

std::vector<Case> bmm_cases(DLDataType dtype) {
  Maker m(dtype, 25);
  if (!m.ok()) return {};
  if (m.f32()) m.add("ViT attention [12, 197, 64] x [12, 64, 197]", {m.t({12, 197, 64}), m.transposed({12, 64, 197})});
  m.add("BERT attention values [8, 48, 48] x [8, 48, 32]", {m.t({8, 48, 48}), m.t({8, 48, 32})});
  m.add("transposed mat2 (q @ k^T)", {m.t({4, 9, 16}), m.transposed({4, 16, 9})});
  m.add("transposed self", {m.transposed({4, 9, 16}), m.t({4, 16, 9})});
  m.add("odd [3, 7, 5] x [3, 5, 11]", {m.t({3, 7, 5}), m.t({3, 5, 11})});
  m.add("one row per batch", {m.t({3, 1, 5}), m.t({3, 5, 11})});
  m.add("one column per batch", {m.t({3, 7, 5}), m.t({3, 5, 1})});
  m.add("batch 1", {m.t({1, 7, 5}), m.t({1, 5, 11})});
  m.add("empty batch", {m.t({0, 7, 5}), m.t({0, 5, 11})});
  m.add("k = 0", {m.t({2, 7, 0}), m.t({2, 0, 11})});
  return m.take();
}

std::vector<Case> baddbmm_cases(DLDataType dtype) {
  Maker m(dtype, 26);
  if (!m.ok()) return {};
  const double scale = 1.0 / std::sqrt(32.0);
  m.add("BERT scores: mask [8, 1, 48] + (q / sqrt(d)) @ k^T",
        {m.t({8, 1, 48}), m.t({8, 48, 32}), m.transposed({8, 32, 48})}, {},
        {{"beta", number(1.0)}, {"alpha", number(scale)}});
  m.add("self [B, M, N], beta 0.5, alpha 2", {m.t({3, 7, 11}), m.t({3, 7, 5}), m.t({3, 5, 11})}, {},
        {{"beta", number(0.5)}, {"alpha", number(2.0)}});
  m.add("self [N], defaults", {m.t({11}), m.t({3, 7, 5}), m.t({3, 5, 11})});
  m.add("self [B, M, 1], int alpha", {m.t({3, 7, 1}), m.t({3, 7, 5}), m.t({3, 5, 11})}, {}, {{"alpha", integer(3)}});
  m.add("beta 0: self ignored", {m.t({3, 7, 11}), m.t({3, 7, 5}), m.t({3, 5, 11})}, {}, {{"beta", integer(0)}});
  m.add("transposed batch1", {m.t({11}), m.transposed({3, 7, 5}), m.t({3, 5, 11})});
  m.add("k = 0", {m.t({3, 7, 11}), m.t({3, 7, 0}), m.t({3, 0, 11})});
  return m.take();
}

std::vector<Case> einsum_cases(DLDataType dtype) {
  Maker m(dtype, 27);
  if (!m.ok()) return {};
  auto eq = [&](const std::string& e, Tensor a, Tensor b, std::string note = "") {
    m.add("'" + e + "'" + (note.empty() ? "" : " " + note), {std::move(a), std::move(b)}, {}, {{"equation", text(e)}});
  };
  eq("ij,jk->ik", m.t({5, 7}), m.t({7, 4}));
  eq("ij,jk->ki", m.t({5, 7}), m.t({7, 4}), "(permuted output)");
  eq("ij,kj->ik", m.t({5, 7}), m.t({4, 7}));
  eq("bij,bjk->bik", m.t({3, 5, 7}), m.t({3, 7, 4}));
  eq("bhqd,bhkd->bhqk", m.t({2, 4, 9, 16}), m.t({2, 4, 11, 16}), "(attention scores)");
  eq("bhqk,bhkd->bqhd", m.t({2, 4, 9, 11}), m.t({2, 4, 11, 16}), "(attention output, heads merged)");
  eq("i,i->", m.t({17}), m.t({17}), "(dot)");
  eq("ij,j->i", m.t({5, 17}), m.t({17}));
  eq("i,j->ij", m.t({5}), m.t({6}), "(outer product)");
  eq("ij,jk", m.t({5, 7}), m.t({7, 4}), "(implicit output)");
  eq("ba,ac", m.t({5, 7}), m.t({7, 4}), "(implicit output, sorted)");
  eq("abc,cd->abd", m.transposed({3, 5, 7}), m.t({7, 4}), "(rows need a copy)");
  eq("...ij,...jk->...ik", m.t({2, 3, 5, 7}), m.t({3, 7, 4}), "(ellipsis, broadcast)");
  eq("bij,bjk->bik", m.t({1, 5, 7}), m.t({3, 7, 4}), "(size-1 batch broadcast)");
  eq("bij,bjk->bik", m.t({0, 5, 7}), m.t({0, 7, 4}), "(empty batch)");
  eq(" ij , jk -> ik ", m.t({5, 7}), m.t({7, 4}), "(spaces)");
  return m.take();
}

// Recurrent layers over a padded sequence, aten::lstm / gru / rnn_tanh / rnn_relu (the
// `.input` overloads). Inputs as aten_ops.hpp's convention has them: input, h0 (and c0 for
// lstm, with the attribute hx.len = 2), then per layer and direction w_ih, w_hh (, b_ih,
// b_hh), the weights constants drawn as nn.LSTM draws them (uniform in +-1/sqrt(hidden)).
struct Recurrent {
  int64_t t = 5, b = 3, features = 10, hidden = 16, layers = 1;
  bool bidirectional = false, batch_first = false, biases = true;
  bool zero_state = false;      // the zeros nn.LSTM passes when the caller gives no state
  bool constant_state = false;  // h0 (c0) a graph constant
  enum class Input { Dense, SwappedView, Transposed } input = Input::Dense;
  bool train_dropout = false;  // train=True, dropout 0.5 between layers
  bool train = false;          // train=True, dropout 0: inference all the same
  int64_t proj = 0;            // LSTM proj_size (a w_hr per layer and direction)
  size_t outputs = 0;          // the node's outputs (0: all, output and final states)
};

std::vector<Case> recurrent_cases(DLDataType dtype, const std::string& cell) {
  Maker m(dtype, 30);
  if (!m.ok()) return {};
  const bool lstm = cell == "lstm";
  const int64_t gates = lstm ? 4 : cell == "gru" ? 3 : 1;
  auto add = [&](const std::string& label, const Recurrent& r) {
    const int64_t dirs = r.bidirectional ? 2 : 1, out_h = r.proj > 0 ? r.proj : r.hidden;
    const double bound = 1.0 / std::sqrt(static_cast<double>(r.hidden));
    std::vector<std::optional<Tensor>> in;
    std::vector<bool> constant;
    const std::vector<int64_t> shape =
        r.batch_first ? std::vector<int64_t>{r.b, r.t, r.features} : std::vector<int64_t>{r.t, r.b, r.features};
    in.push_back(r.input == Recurrent::Input::SwappedView  ? m.batch_first(shape)
                 : r.input == Recurrent::Input::Transposed ? m.transposed(shape)
                                                           : m.t(shape));
    constant.push_back(false);
    for (int k = 0; k < (lstm ? 2 : 1); ++k) {
      const int64_t width = k == 0 ? out_h : r.hidden;  // h0 is proj_size wide with projections
      in.push_back(r.zero_state ? m.t({r.layers * dirs, r.b, width}, 0.0, 0.0)
                                : m.t({r.layers * dirs, r.b, width}, -0.5, 0.5));
      constant.push_back(r.constant_state);
    }
    for (int64_t l = 0; l < r.layers; ++l)
      for (int64_t d = 0; d < dirs; ++d) {
        const int64_t k = l == 0 ? r.features : dirs * out_h;
        in.push_back(m.t({gates * r.hidden, k}, -bound, bound));
        in.push_back(m.t({gates * r.hidden, out_h}, -bound, bound));
        if (r.biases) {
          in.push_back(m.t({gates * r.hidden}, -bound, bound));
          in.push_back(m.t({gates * r.hidden}, -bound, bound));
        }
        if (r.proj > 0) in.push_back(m.t({r.proj, r.hidden}, -bound, bound));
        constant.resize(in.size(), true);
      }
    Attributes attrs{{"has_biases", integer(r.biases)},
                     {"num_layers", integer(r.layers)},
                     {"dropout", number(r.train_dropout ? 0.5 : 0.0)},
                     {"train", integer(r.train || r.train_dropout)},
                     {"bidirectional", integer(r.bidirectional)},
                     {"batch_first", integer(r.batch_first)}};
    if (lstm) attrs.emplace_back("hx.len", integer(2));
    Case& c = m.add(label, std::move(in), std::move(constant), std::move(attrs));
    c.num_outputs = r.outputs > 0 ? r.outputs : lstm ? 3 : 2;
  };
  Recurrent zoo;  // the plain zoo's models (tools/zoo/plain_zoo_models.py)
  if (lstm) {     // LstmTagger: 2 bidirectional batch-first layers, no initial state
    zoo.t = 7, zoo.b = 2, zoo.features = 24, zoo.hidden = 48, zoo.layers = 2;
    zoo.bidirectional = zoo.batch_first = zoo.zero_state = true;
    add("zoo LstmTagger: 2 layers, bidirectional, batch_first [2, 7, 24] -> 48, zero state", zoo);
  } else {  // GruSeq: 2 sequence-major layers, its initial state an input
    zoo.t = 29, zoo.b = 3, zoo.features = 24, zoo.hidden = 40, zoo.layers = 2;
    add("zoo GruSeq: 2 layers, [29, 3, 24] -> 40, initial state given", zoo);
  }
  auto with = [](Recurrent r, auto&& change) {
    change(r);
    return r;
  };
  const Recurrent base;
  add("1 layer [5, 3, 10] -> 16, initial state given", base);
  add("1 layer, zero initial state", with(base, [](Recurrent& r) { r.zero_state = true; }));
  add("1 layer, batch_first", with(base, [](Recurrent& r) { r.batch_first = true; }));
  add("1 layer, bidirectional", with(base, [](Recurrent& r) { r.bidirectional = true; }));
  add("1 layer, bidirectional, batch_first, zero initial state",
      with(base, [](Recurrent& r) { r.bidirectional = r.batch_first = r.zero_state = true; }));
  add("2 layers, batch_first", with(base, [](Recurrent& r) { r.layers = 2, r.batch_first = true; }));
  add("2 layers, batch_first, zero initial state",
      with(base, [](Recurrent& r) { r.layers = 2, r.batch_first = r.zero_state = true; }));
  add("2 layers, bidirectional, initial state given",
      with(base, [](Recurrent& r) { r.layers = 2, r.bidirectional = true; }));
  add("2 layers, bidirectional, batch_first, zero initial state",
      with(base, [](Recurrent& r) { r.layers = 2, r.bidirectional = r.batch_first = r.zero_state = true; }));
  add("3 layers, bidirectional (outputs between layers take turns in two buffers)",
      with(base, [](Recurrent& r) { r.layers = 3, r.bidirectional = true; }));
  add("2 layers, no biases", with(base, [](Recurrent& r) { r.layers = 2, r.biases = false; }));
  add("[T, B, F] view of a batch-first buffer",
      with(base, [](Recurrent& r) { r.input = Recurrent::Input::SwappedView; }));
  add("batch_first [B, T, F] view of a sequence-major buffer, bidirectional", with(base, [](Recurrent& r) {
        r.batch_first = r.bidirectional = true, r.input = Recurrent::Input::SwappedView;
      }));
  add("transposed input (features not contiguous)",
      with(base, [](Recurrent& r) { r.input = Recurrent::Input::Transposed; }));
  add("one step, batch 1", with(base, [](Recurrent& r) { r.t = 1, r.b = 1; }));
  add("hidden 1", with(base, [](Recurrent& r) { r.hidden = 1, r.bidirectional = true; }));
  add("3 layers [50, 4, 32] -> 64 (a unidirectional stack runs as a wavefront of chunks, the last shorter)",
      with(base, [](Recurrent& r) { r.t = 50, r.b = 4, r.features = 32, r.hidden = 64, r.layers = 3; }));
  add("2 layers [40, 2, 8] -> 24, batch_first, only the output (no final states)", with(base, [](Recurrent& r) {
        r.t = 40, r.b = 2, r.features = 8, r.hidden = 24, r.layers = 2, r.batch_first = true, r.outputs = 1;
      }));
  add("2 layers [40, 2, 8] -> 24, output and h_n",
      with(base, [](Recurrent& r) { r.t = 40, r.b = 2, r.features = 8, r.hidden = 24, r.layers = 2, r.outputs = 2; }));
  add("[64, 8, 32] -> 64, 2 layers, bidirectional (a text model's size)", with(base, [](Recurrent& r) {
        r.t = 64, r.b = 8, r.features = 32, r.hidden = 64, r.layers = 2, r.bidirectional = true;
      }));
  add("initial state a graph constant", with(base, [](Recurrent& r) { r.constant_state = true, r.layers = 2; }));
  add("train=True with dropout 0 (inference all the same)",
      with(base, [](Recurrent& r) { r.train = true, r.layers = 2; }));
  add("empty batch", with(base, [](Recurrent& r) { r.b = 0, r.bidirectional = true, r.layers = 2; }));
  add("train=True with dropout 0.5 between 2 layers (declined: random)",
      with(base, [](Recurrent& r) { r.train_dropout = true, r.layers = 2; }));
  if (lstm) add("proj_size 8 (declined: LSTM projections)", with(base, [](Recurrent& r) { r.proj = 8; }));
  return m.take();
}

}  // namespace

void add_linalg_cases(CaseTable& table) {
  table.add("aten::linear", [](DLDataType t) { return linear_cases(t, {}, 1.0, false); });
  table.add("aten::linear+aten::relu", [](DLDataType t) { return linear_cases(t, {}, 3.0, false); });
  table.add("aten::linear+aten::silu", [](DLDataType t) { return linear_cases(t, {}, 3.0, false); });
  table.add("aten::linear+aten::hardswish", [](DLDataType t) { return linear_cases(t, {}, 3.0, false); });
  table.add("aten::linear+aten::gelu", [](DLDataType t) {
    std::vector<Case> cases = linear_cases(t, {{"post.approximate", text("none")}}, 3.0, true);
    for (Case c : linear_cases(t, {{"post.approximate", text("tanh")}}, 3.0, false)) {
      c.label += ", tanh approximation";
      cases.push_back(std::move(c));
    }
    return cases;
  });
  table.add("aten::linear+aten::gelu+aten::linear", [](DLDataType t) {
    std::vector<Case> cases = mlp_cases(t, {{"post.approximate", text("none")}});
    for (Case c : mlp_cases(t, {{"post.approximate", text("tanh")}})) {
      c.label += ", tanh approximation";
      cases.push_back(std::move(c));
    }
    return cases;
  });
  table.add("aten::linear+aten::relu+aten::linear", [](DLDataType t) { return mlp_cases(t, {}); });
  table.add("aten::linear+aten::chunk", linear_chunk_cases);
  table.add("switchyard::swiglu", swiglu_cases);
  table.add("aten::bmm+aten::transpose+aten::contiguous", bmm_transpose_cases);
  table.add("aten::addmm", addmm_cases);
  table.add("aten::mm", mm_cases);
  table.add("aten::matmul", matmul_cases);
  table.add("aten::bmm", bmm_cases);
  table.add("aten::baddbmm", baddbmm_cases);
  table.add("aten::einsum", einsum_cases);
  for (const char* cell : {"lstm", "gru", "rnn_tanh", "rnn_relu"})
    table.add(std::string("aten::") + cell, [cell](DLDataType t) { return recurrent_cases(t, cell); });
}

}  // namespace switchyard::conformance
