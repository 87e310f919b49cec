// Conformance cases for element-wise ops (broadcasting, strides, scalars, edge sizes), the
// mean, the softmax and the layer norm.
#include "case_makers.hpp"
#include "families.hpp"

#include <limits>

namespace switchyard::conformance {

namespace {

// float32 and float64; the float64 row also has a float32 self with a 0-dim float64
// other, which is how a traced Python number reaches an op (ATen computes in float32).
// `numbers`: the op also takes a Python number as `other` (add, sub, mul, div; not
// maximum and minimum, whose operands are tensors).
std::vector<Case> binary_cases(DLDataType dtype, bool with_alpha, bool numbers = true) {
  const DLDataType f64{kDLFloat, 64, 1};
  const bool is_f64 = dtype.code == f64.code && dtype.bits == f64.bits && dtype.lanes == 1;
  if (!is_f32(dtype) && !is_f64) return {};
  Rng rng(11);
  auto t = [&](std::vector<int64_t> shape) { return random_tensor(rng, dtype, std::move(shape)); };
  std::vector<Case> cases;
  auto add = [&](std::string label, std::optional<Tensor> a, std::optional<Tensor> b, Attributes attrs = {}) {
    Case c;
    c.label = std::move(label);
    c.inputs = {std::move(a)};
    if (b) c.inputs.push_back(std::move(b));
    c.attrs = std::move(attrs);
    if (with_alpha && !find_attr(c.attrs, "alpha")) c.attrs.emplace_back("alpha", integer(1));
    cases.push_back(std::move(c));
  };
  add("same shape [4, 5]", t({4, 5}), t({4, 5}));
  add("broadcast [2, 3, 4] and [4]", t({2, 3, 4}), t({4}));
  add("broadcast [3, 1] and [1, 5]", t({3, 1}), t({1, 5}));
  add("0-dim other", t({2, 7}), t({}));
  add("empty [0, 3]", t({0, 3}), t({0, 3}));
  add("transposed self", transposed_layout(t({6, 9})), t({6, 9}));
  add("strided rows other", t({5, 8}), strided_rows(rng, dtype, {5, 8}));
  add("odd size 1031", t({1031}), t({1031}));
  // A squeeze-excitation block's per-channel scale, each operand order, with a scale per
  // batch item, and a self whose H and W are swapped in memory.
  add("per-channel [2, 24, 5, 6] and [1, 24, 1, 1]", t({2, 24, 5, 6}), t({1, 24, 1, 1}));
  add("per-channel [3, 20, 1, 1] first, [3, 20, 4, 4]", t({3, 20, 1, 1}), t({3, 20, 4, 4}));
  add("per-channel transposed self [2, 17, 6, 5]", transposed_layout(t({2, 17, 6, 5})), t({2, 17, 1, 1}));
  // Large enough (over 65k elements) to be split across threads.
  add("per-channel, mobilenet's first SE block at batch 2 [2, 16, 56, 56] by [2, 16, 1, 1]", t({2, 16, 56, 56}),
      t({2, 16, 1, 1}));
  if (is_f32(dtype)) {  // NaN and infinities on both sides (inf * 0 is NaN)
    Tensor x = t({1, 18, 7, 7}), scale = t({1, 18, 1, 1});
    float* xp = x.data<float>();
    for (int64_t i = 3; i < x.numel(); i += 53) xp[i] = std::numeric_limits<float>::quiet_NaN();
    for (int64_t i = 11; i < x.numel(); i += 71) xp[i] = std::numeric_limits<float>::infinity();
    scale.data<float>()[2] = 0.0f;
    scale.data<float>()[5] = -std::numeric_limits<float>::infinity();
    add("per-channel with NaN, inf and a zero scale", std::move(x), std::move(scale));
  }
  if (with_alpha) add("alpha 2.5", t({3, 4}), t({3, 4}), {{"alpha", number(2.5)}});
  if (!numbers) return cases;
  add("scalar other", t({3, 4}), std::nullopt, {{"other", number(0.75)}});
  if (is_f64) add("float32 self, 0-dim float64 other", random_tensor(rng, {kDLFloat, 32, 1}, {3, 4}), t({}));
  return cases;
}

// `lo`: the inputs' lower bound (0 for sqrt and rsqrt; a negative value is NaN in both).
std::vector<Case> unary_cases(DLDataType dtype, Attributes attrs = {}, double lo = -4) {
  if (!is_f32(dtype)) return {};
  Rng rng(12);
  std::vector<Case> cases;
  auto add = [&](std::string label, Tensor x) {
    Case c;
    c.label = std::move(label);
    c.inputs = {std::move(x)};
    c.attrs = attrs;
    cases.push_back(std::move(c));
  };
  add("[4, 5]", random_tensor(rng, dtype, {4, 5}, lo, 4));
  add("0-dim", random_tensor(rng, dtype, {}, lo, 4));
  add("empty [0]", random_tensor(rng, dtype, {0}));
  add("transposed [7, 3]", transposed_layout(random_tensor(rng, dtype, {7, 3}, lo, 4)));
  add("odd size 4099", random_tensor(rng, dtype, {4099}, lo < 0 ? -6 : lo, 6));
  return cases;
}

// pow with a number exponent: squares (RMSNorm's), a root, a cube, a negative power.
std::vector<Case> pow_cases(DLDataType dtype) {
  std::vector<Case> cases;
  for (double e : {2.0, 3.0}) {
    for (Case c : unary_cases(dtype, {{"exponent", number(e)}})) {
      c.label += ", exponent " + std::to_string(static_cast<int>(e));
      cases.push_back(std::move(c));
    }
  }
  for (double e : {0.5, -1.5}) {
    for (Case c : unary_cases(dtype, {{"exponent", number(e)}}, 0.25)) {
      c.label += ", exponent " + std::to_string(e);
      cases.push_back(std::move(c));
    }
  }
  Rng rng(15);
  Case c;
  c.label = "integer exponent 2 [3, 8]";
  c.inputs = {random_tensor(rng, dtype, {3, 8}, -3, 3)};
  c.attrs = {{"exponent", integer(2)}};
  if (is_f32(dtype)) cases.push_back(std::move(c));
  return cases;
}

// The mean over dims: a token's features, NCHW's spatial dims (kept or not), a sequence's
// steps, every dim, size-1 dims around the reduced ones, a strided input, empty sizes.
std::vector<Case> mean_cases(DLDataType dtype) {
  if (!is_f32(dtype)) return {};
  Rng rng(16);
  auto t = [&](std::vector<int64_t> shape) { return random_tensor(rng, dtype, std::move(shape), -3, 3); };
  std::vector<Case> cases;
  auto add = [&](std::string label, Tensor x, std::optional<std::vector<int64_t>> dims, bool keepdim) {
    Case c;
    c.label = std::move(label);
    c.inputs = {std::move(x)};
    if (dims) c.attrs.emplace_back("dim", ints(*dims));
    c.attrs.emplace_back("keepdim", integer(keepdim ? 1 : 0));
    cases.push_back(std::move(c));
  };
  add("tokens [2, 5, 64], dim -1, keepdim", t({2, 5, 64}), std::vector<int64_t>{-1}, true);
  add("NCHW [2, 16, 7, 7], dims [2, 3]", t({2, 16, 7, 7}), std::vector<int64_t>{2, 3}, false);
  add("NCHW [2, 16, 7, 7], dims [-1, -2], keepdim", t({2, 16, 7, 7}), std::vector<int64_t>{-1, -2}, true);
  add("steps [3, 29, 12], dim 1", t({3, 29, 12}), std::vector<int64_t>{1}, false);
  add("every dim [4, 6]", t({4, 6}), std::nullopt, false);
  add("size-1 dims [1, 8, 1, 5], dims [1, 2]", t({1, 8, 1, 5}), std::vector<int64_t>{1, 2}, false);
  add("long rows [3, 4099], dim -1", t({3, 4099}), std::vector<int64_t>{-1}, false);
  add("transposed [6, 9], dim -1", transposed_layout(t({6, 9})), std::vector<int64_t>{-1}, false);
  add("empty batch [0, 8], dim -1", t({0, 8}), std::vector<int64_t>{-1}, false);
  return cases;
}

// RMSNorm as the host's pattern pass writes it (switchyard::rms_norm): decoder rows, a
// run-time weight, a strided input, long rows, an empty batch.
std::vector<Case> rms_norm_cases(DLDataType dtype) {
  if (!is_f32(dtype)) return {};
  Rng rng(17);
  auto t = [&](std::vector<int64_t> shape) { return random_tensor(rng, dtype, std::move(shape), -3, 3); };
  std::vector<Case> cases;
  auto add = [&](std::string label, Tensor x, Tensor w, bool constant_weight, double eps) {
    Case c;
    c.label = std::move(label);
    c.inputs = {std::move(x), std::move(w)};
    c.constant = {false, constant_weight};
    c.attrs.emplace_back("eps", number(eps));
    cases.push_back(std::move(c));
  };
  add("decoder [2, 7, 64], eps 1e-6", t({2, 7, 64}), t({64}), true, 1e-6);
  add("rows [5, 96], run-time weight, eps 1e-5", t({5, 96}), t({96}), false, 1e-5);
  add("transposed [6, 9]", transposed_layout(t({6, 9})), t({9}), true, 1e-6);
  add("long rows [3, 4099]", t({3, 4099}), t({4099}), true, 1e-6);
  add("empty batch [0, 8]", t({0, 8}), t({8}), true, 1e-6);
  return cases;
}

// Rotary embeddings as the host's pattern pass writes them (switchyard::rotary): a decoder's
// transposed heads against [1, 1, T, D] tables, dims given as -1, an odd split, no rows.
std::vector<Case> rotary_cases(DLDataType dtype) {
  if (!is_f32(dtype)) return {};
  Rng rng(19);
  auto t = [&](std::vector<int64_t> shape) { return random_tensor(rng, dtype, std::move(shape), -2, 2); };
  std::vector<Case> cases;
  auto add = [&](std::string label, Tensor x, Tensor cos, Tensor sin, int64_t dim, int64_t cat_dim, int64_t half) {
    Case c;
    c.label = std::move(label);
    c.inputs = {std::move(x), std::move(cos), std::move(sin)};
    c.attrs = {{"dim", integer(dim)}, {"cat_dim", integer(cat_dim)}, {"half", integer(half)}};
    cases.push_back(std::move(c));
  };
  add("decoder heads [2, 4, 7, 16] x [1, 1, 7, 16]", t({2, 4, 7, 16}), t({1, 1, 7, 16}), t({1, 1, 7, 16}), 3, -1, 8);
  add("strided input [2, 7, 16] (last two dims transposed in memory)", transposed_layout(t({2, 7, 16})), t({7, 1}),
      t({1, 16}), -1, -1, 8);
  add("odd split [3, 10], half 3", t({3, 10}), t({10}), t({3, 10}), 1, 1, 3);
  add("no rows [0, 8]", t({0, 8}), t({8}), t({8}), -1, -1, 4);
  return cases;
}

// Softmax along `dim`: attention-shaped scores, other dims, strided input, masked rows
// (all -inf gives NaN), NaN and +inf scores, empty and 0-dim tensors.
std::vector<Case> softmax_cases(DLDataType dtype, const char* extra_attr) {
  if (!is_f32(dtype)) return {};
  Rng rng(13);
  auto t = [&](std::vector<int64_t> shape) { return random_tensor(rng, dtype, std::move(shape), -8, 8); };
  std::vector<Case> cases;
  auto add = [&](std::string label, Tensor x, int64_t dim) {
    Case c;
    c.label = std::move(label);
    c.inputs = {std::move(x)};
    c.attrs = {{"dim", integer(dim)}};
    if (std::string(extra_attr) == "half_to_float") c.attrs.emplace_back("half_to_float", integer(0));
    cases.push_back(std::move(c));
  };
  add("scores [2, 4, 9, 37], dim -1", t({2, 4, 9, 37}), -1);
  add("[3, 5, 7], dim 1", t({3, 5, 7}), 1);
  add("[3, 5, 7], dim 0", t({3, 5, 7}), 0);
  add("long rows [4, 1031], dim -1", t({4, 1031}), -1);
  add("transposed [6, 9], dim -1", transposed_layout(t({6, 9})), -1);
  add("transposed [6, 9], dim 0", transposed_layout(t({6, 9})), 0);
  Tensor masked = t({3, 8});
  const float inf = std::numeric_limits<float>::infinity();
  for (int64_t j = 0; j < 8; ++j) masked.data<float>()[j] = -inf;      // row 0: every key masked
  for (int64_t j = 8; j < 16; j += 2) masked.data<float>()[j] = -inf;  // row 1: half of them
  masked.data<float>()[19] = std::numeric_limits<float>::quiet_NaN();  // row 2: a NaN score
  add("masked rows, NaN score", masked, -1);
  Tensor inf_score = t({2, 5});
  inf_score.data<float>()[2] = inf;
  add("+inf score", inf_score, -1);
  add("empty [0, 4]", t({0, 4}), -1);
  add("0-dim", t({}), 0);
  return cases;
}

// Layer norm over the trailing dims: affine or not, one or two normalised dims, a
// strided input, long rows and a zero row (variance 0), an empty batch, another eps.
std::vector<Case> layer_norm_cases(DLDataType dtype) {
  if (!is_f32(dtype)) return {};
  Rng rng(14);
  auto t = [&](std::vector<int64_t> shape) { return random_tensor(rng, dtype, std::move(shape), -3, 3); };
  std::vector<Case> cases;
  auto add = [&](std::string label, Tensor x, std::vector<int64_t> normalized, bool affine, double eps = 1e-5) {
    Case c;
    c.label = std::move(label);
    c.inputs = {std::move(x)};
    if (affine) c.inputs.insert(c.inputs.end(), {t(normalized), t(normalized)});
    c.attrs = {{"normalized_shape", ints(normalized)}, {"eps", number(eps)}, {"cudnn_enable", integer(0)}};
    cases.push_back(std::move(c));
  };
  add("tokens [2, 5, 16], affine", t({2, 5, 16}), {16}, true);
  add("tokens [2, 5, 16], no weight or bias", t({2, 5, 16}), {16}, false);
  add("two dims [3, 4, 6] over [4, 6]", t({3, 4, 6}), {4, 6}, true);
  add("transposed [9, 7]", transposed_layout(t({9, 7})), {7}, true);
  add("long rows [3, 1031]", t({3, 1031}), {1031}, true);
  Tensor flat = t({2, 8});
  // Row 0 is zeros: variance 0, so only eps keeps 0/0 away (a non-zero constant would
  // test ATen's rounding of the mean, which eps = 1e-6 magnifies a thousandfold).
  for (int64_t j = 0; j < 8; ++j) flat.data<float>()[j] = 0.0f;
  add("zero row, eps 1e-6", flat, {8}, true, 1e-6);
  add("empty [0, 8]", t({0, 8}), {8}, true);
  return cases;
}

}  // namespace

void add_elementwise_cases(CaseTable& table) {
  table.add("aten::layer_norm", layer_norm_cases);
  table.add("aten::softmax", [](DLDataType t) { return softmax_cases(t, "dtype"); });
  table.add("aten::_softmax", [](DLDataType t) { return softmax_cases(t, "half_to_float"); });
  table.add("aten::add", [](DLDataType t) { return binary_cases(t, true); });
  table.add("aten::sub", [](DLDataType t) { return binary_cases(t, true); });
  table.add("aten::mul", [](DLDataType t) { return binary_cases(t, false); });
  table.add("aten::div", [](DLDataType t) { return binary_cases(t, false); });
  table.add("aten::maximum", [](DLDataType t) { return binary_cases(t, false, false); });
  table.add("aten::minimum", [](DLDataType t) { return binary_cases(t, false, false); });
  for (const char* op : {"aten::relu", "aten::sigmoid", "aten::tanh", "aten::silu", "aten::hardswish",
                         "aten::hardsigmoid", "aten::neg", "aten::exp", "aten::sin", "aten::cos"})
    table.add(op, [](DLDataType t) { return unary_cases(t); });
  for (const char* op : {"aten::sqrt", "aten::rsqrt"})
    table.add(op, [](DLDataType t) { return unary_cases(t, {}, 0.0); });
  table.add("aten::pow", pow_cases);
  table.add("aten::mean", mean_cases);
  table.add("switchyard::rms_norm", rms_norm_cases);
  table.add("switchyard::rotary", rotary_cases);
  table.add("aten::gelu", [](DLDataType t) {
    std::vector<Case> cases = unary_cases(t, {{"approximate", text("none")}});
    for (Case c : unary_cases(t, {{"approximate", text("tanh")}})) {
      c.label += ", tanh approximation";
      cases.push_back(std::move(c));
    }
    return cases;
  });
}

}  // namespace switchyard::conformance
