// Conformance cases for element-wise ops: broadcasting, strides, scalars, edge sizes.
#include "case_makers.hpp"
#include "families.hpp"

namespace switchyard::conformance {

namespace {

std::vector<Case> binary_cases(DLDataType dtype, bool with_alpha) {
  if (!is_f32(dtype)) return {};
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
  if (with_alpha) add("alpha 2.5", t({3, 4}), t({3, 4}), {{"alpha", number(2.5)}});
  add("scalar other", t({3, 4}), std::nullopt, {{"other", number(0.75)}});
  return cases;
}

std::vector<Case> unary_cases(DLDataType dtype, Attributes attrs = {}) {
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
  add("[4, 5]", random_tensor(rng, dtype, {4, 5}, -4, 4));
  add("0-dim", random_tensor(rng, dtype, {}, -4, 4));
  add("empty [0]", random_tensor(rng, dtype, {0}));
  add("transposed [7, 3]", transposed_layout(random_tensor(rng, dtype, {7, 3}, -4, 4)));
  add("odd size 4099", random_tensor(rng, dtype, {4099}, -6, 6));
  return cases;
}

}  // namespace

void add_elementwise_cases(CaseTable& table) {
  table.add("aten::add", [](DLDataType t) { return binary_cases(t, true); });
  table.add("aten::sub", [](DLDataType t) { return binary_cases(t, true); });
  table.add("aten::mul", [](DLDataType t) { return binary_cases(t, false); });
  table.add("aten::div", [](DLDataType t) { return binary_cases(t, false); });
  for (const char* op : {"aten::relu", "aten::sigmoid", "aten::tanh", "aten::silu", "aten::hardswish",
                         "aten::hardsigmoid", "aten::neg", "aten::exp"})
    table.add(op, [](DLDataType t) { return unary_cases(t); });
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
