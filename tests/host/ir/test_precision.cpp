// ir::compute_in_float32, the precision policy's rewrite: half-precision constants become
// float32 once, half-precision inputs are converted as they enter, dtype arguments that
// name a half dtype name float32.
#include "ir/precision.hpp"

#include <switchyard/half.hpp>

#include <gtest/gtest.h>

using namespace switchyard;
using namespace switchyard::ir;

namespace {

constexpr DLDataType kF16{kDLFloat, 16, 1}, kBF16{kDLBfloat, 16, 1}, kF32{kDLFloat, 32, 1};

Tensor half_tensor(DLDataType dtype, std::vector<int64_t> shape, const std::vector<float>& v) {
  Tensor t = Tensor::empty(dtype, std::move(shape));
  for (size_t i = 0; i < v.size(); ++i)
    t.data<uint16_t>()[i] = dtype.code == kDLBfloat ? float_to_bfloat16(v[i]) : float_to_half(v[i]);
  return t;
}

// x (dtype) -> linear(x, W) -> y ; z = zeros_like(y, dtype=<half code>)
Graph linear_graph(DLDataType dtype) {
  Graph g;
  const ValueId x = g.add_input("x", dtype, {-1, 2});
  const ValueId w = g.add_constant("w", half_tensor(dtype, {3, 2}, {0.5f, -1.25f, 2.0f, 0.375f, -3.0f, 1.0f}));
  const int32_t lin = g.add_node("lin", "aten::linear", {x, w}, {"y"});
  const ValueId y = g.nodes[static_cast<size_t>(lin)].outputs[0];
  const int64_t code = dtype.code == kDLBfloat ? 15 : 5;  // c10::ScalarType
  const int32_t z = g.add_node("z", "aten::zeros_like", {y}, {"z"}, {{"dtype", Attribute::of_int(code)}});
  g.outputs = {y, g.nodes[static_cast<size_t>(z)].outputs[0]};
  validate(g);
  return g;
}

}  // namespace

TEST(Precision, FindsTheHalfDtypeOfInputsAndConstants) {
  Graph plain;
  plain.add_input("x", kF32, {2});
  EXPECT_EQ(half_dtype_of(plain).lanes, 0);
  EXPECT_EQ(half_dtype_of(linear_graph(kBF16)).code, kDLBfloat);
  Graph both = linear_graph(kBF16);
  both.add_constant("c", half_tensor(kF16, {1}, {1.0f}));
  EXPECT_EQ(half_dtype_of(both).code, kDLFloat) << "float16 is named first";
}

TEST(Precision, ConstantsBecomeFloat32OnceAndInputsAreConvertedAsTheyEnter) {
  for (DLDataType dtype : {kBF16, kF16}) {
    Graph g = linear_graph(dtype);
    const Float32Upcast up = compute_in_float32(g);
    validate(g);
    EXPECT_EQ(up.constants, 1u);
    EXPECT_EQ(up.constant_bytes, 6 * sizeof(float));
    EXPECT_EQ(up.inputs, std::vector<std::string>{"x"});
    EXPECT_EQ(up.dtype_arguments, 1u);
    const Value& w = g.values[static_cast<size_t>(g.find_value("w"))];
    ASSERT_TRUE(same_dtype(w.constant.dtype(), kF32));
    EXPECT_EQ(std::vector<float>(w.constant.data<float>(), w.constant.data<float>() + 6),
              (std::vector<float>{0.5f, -1.25f, 2.0f, 0.375f, -3.0f, 1.0f}));  // exact in both formats
    ASSERT_EQ(g.nodes.size(), 3u);
    const Node& cast = g.nodes[0];  // sorted before its reader
    EXPECT_EQ(cast.name, "x.to_float32");
    EXPECT_EQ(cast.op, "aten::to");
    EXPECT_EQ(find_attr(cast.attrs, "dtype")->i, 6);
    EXPECT_EQ(cast.inputs[0], g.find_value("x"));
    EXPECT_EQ(g.nodes[1].inputs[0], cast.outputs[0]) << "the linear reads the converted input";
    EXPECT_EQ(find_attr(g.nodes[2].attrs, "dtype")->i, 6) << "zeros_like's dtype now names float32";
    EXPECT_TRUE(same_dtype(g.values[static_cast<size_t>(g.find_value("x"))].dtype, dtype))
        << "callers still pass the model's own dtype";
  }
}

TEST(Precision, AFloat32ModelIsLeftAlone) {
  Graph g;
  const ValueId x = g.add_input("x", kF32, {2});
  g.add_node("n", "aten::neg", {x}, {"y"});
  g.outputs = {g.find_value("y")};
  const Float32Upcast up = compute_in_float32(g);
  EXPECT_EQ(up.constants + up.inputs.size() + up.dtype_arguments, 0u);
  EXPECT_EQ(g.nodes.size(), 1u);
}
