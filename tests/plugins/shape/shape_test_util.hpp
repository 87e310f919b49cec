// Helpers for the shape plugin's tests: one-node graphs run through the embedding API
// on the shape plugin alone (strict selection) and on the aten reference plugin alone,
// byte-wise comparison of the results (shape ops move bytes, so they must match
// exactly), deterministic fills for every dtype, and zero-copy checks.
#pragma once

#include "../../host/exec/exec_test_util.hpp"
#include "api/internal.hpp"
#include "ir/graph.hpp"

#include <switchyard/runtime.hpp>

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

namespace shape_test {

using switchyard::Tensor;
using Shape = std::vector<int64_t>;
namespace ir = switchyard::ir;

inline constexpr DLDataType kF32{kDLFloat, 32, 1}, kF64{kDLFloat, 64, 1}, kF16{kDLFloat, 16, 1},
    kBF16{kDLBfloat, 16, 1}, kI8{kDLInt, 8, 1}, kI16{kDLInt, 16, 1}, kI32{kDLInt, 32, 1}, kI64{kDLInt, 64, 1},
    kU8{kDLUInt, 8, 1}, kBool{6, 8, 1};

inline const std::vector<DLDataType>& all_dtypes() {
  static const std::vector<DLDataType> d = {kF32, kF64, kF16, kBF16, kI8, kI16, kI32, kI64, kU8, kBool};
  return d;
}

inline std::string strict_config(const std::string& plugin) {
  return sytest::write_config(
      "shape_test_" + plugin,
      "[plugins]\nload = [\"" + plugin + "\"]\n[selection]\ndefault = [\"" + plugin + "\"]\nstrict = true\n");
}

// Element i of a tensor of `dtype`, as valid (finite, in-range) bits of that dtype.
inline void fill(Tensor& t, uint32_t seed = 1) {
  const DLDataType d = t.dtype();
  char* p = static_cast<char*>(t.raw_data());
  for (int64_t i = 0; i < t.numel(); ++i) {
    const int64_t v = (i * 37 + seed * 11) % 201 - 100;  // distinct-ish, small
    if (d.code == kDLFloat && d.bits == 32)
      reinterpret_cast<float*>(p)[i] = static_cast<float>(v) * 0.25f;
    else if (d.code == kDLFloat && d.bits == 64)
      reinterpret_cast<double*>(p)[i] = static_cast<double>(v) * 0.125;
    else if (d.code == kDLFloat && d.bits == 16)
      reinterpret_cast<uint16_t*>(p)[i] = static_cast<uint16_t>(0x3C00 + (v & 0x1FF));
    else if (d.code == kDLBfloat)
      reinterpret_cast<uint16_t*>(p)[i] = static_cast<uint16_t>(0x3F80 + (v & 0x7F));
    else if (d.code == 6)
      reinterpret_cast<uint8_t*>(p)[i] = static_cast<uint8_t>(v % 3 == 0);
    else if (d.bits == 8)
      reinterpret_cast<uint8_t*>(p)[i] = static_cast<uint8_t>(v);
    else if (d.bits == 16)
      reinterpret_cast<int16_t*>(p)[i] = static_cast<int16_t>(v * 300);
    else if (d.bits == 32)
      reinterpret_cast<int32_t*>(p)[i] = static_cast<int32_t>(v * 100000);
    else
      reinterpret_cast<int64_t*>(p)[i] = v * 10000000000LL;
  }
}

inline Tensor filled(DLDataType dtype, Shape shape, uint32_t seed = 1) {
  Tensor t = Tensor::empty(dtype, std::move(shape));
  fill(t, seed);
  return t;
}

// `shape` seen through a layout with its last two dims swapped in memory (non-contiguous),
// with the same logical values as filled(dtype, shape, seed).
inline Tensor transposed_copy(const Tensor& t) {
  Shape shape = t.shape(), swapped = shape;
  const size_t n = shape.size();
  std::swap(swapped[n - 1], swapped[n - 2]);
  Tensor storage = Tensor::empty(t.dtype(), swapped);
  const size_t es = switchyard::dtype_size(t.dtype());
  const int64_t rows = shape[n - 2], cols = shape[n - 1], batch = t.numel() / std::max<int64_t>(rows * cols, 1);
  const char* src = static_cast<const char*>(t.contiguous().raw_data());
  char* dst = static_cast<char*>(storage.raw_data());
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c)
        std::memcpy(dst + ((b * cols + c) * rows + r) * es, src + ((b * rows + r) * cols + c) * es, es);
  Shape strides = storage.strides();
  std::swap(strides[n - 1], strides[n - 2]);
  return Tensor::from_blob(storage.raw_data(), t.dtype(), shape, strides, [storage] {});
}

// The bytes of a tensor's elements in row-major order.
inline std::vector<uint8_t> bytes(const Tensor& t) {
  Tensor c = t.contiguous();
  const uint8_t* p = static_cast<const uint8_t*>(c.raw_data());
  return std::vector<uint8_t>(p, p + c.nbytes());
}

// Does t's memory (first to last element) lie inside `parent`'s?
inline bool inside(const Tensor& t, const Tensor& parent) {
  auto span = [](const Tensor& x, const char** lo, const char** hi) {
    int64_t last = 0;
    const Shape strides = x.strides();
    for (size_t d = 0; d < strides.size(); ++d) last += (x.shape()[d] - 1) * strides[d];
    *lo = static_cast<const char*>(x.raw_data());
    *hi = *lo + (last + 1) * static_cast<int64_t>(switchyard::dtype_size(x.dtype()));
  };
  const char *a, *b, *pa, *pb;
  span(t, &a, &b);
  span(parent, &pa, &pb);
  return a >= pa && b <= pb;
}

struct Op {
  std::string op;
  ir::Attributes attrs;
  size_t num_outputs = 1;
};

// One node `op` over graph inputs x0, x1, ...; its outputs y0, y1, ... are the graph's.
inline ir::Graph one_node(const Op& op, const std::vector<Tensor>& inputs) {
  ir::Graph g;
  std::vector<ir::ValueId> ids;
  for (size_t i = 0; i < inputs.size(); ++i) ids.push_back(g.add_input("x" + std::to_string(i), inputs[i].dtype()));
  std::vector<std::string> names;
  for (size_t o = 0; o < op.num_outputs; ++o) names.push_back("y" + std::to_string(o));
  g.add_node("n", op.op, ids, names, op.attrs);
  for (const std::string& name : names) g.outputs.push_back(g.find_value(name));
  return g;
}

// Runs the node on `plugin` alone; checks that it ran there.
inline std::vector<Tensor> run_on(const std::string& plugin, const Op& op, const std::vector<Tensor>& inputs) {
  switchyard::Runtime rt(switchyard::Options{strict_config(plugin)});
  auto model = load_graph(rt, one_node(op, inputs));
  for (const auto& e : model->plan(inputs)) EXPECT_EQ(e.backend, plugin) << e.node;
  return model->run(inputs);
}

// The error of running the node on the shape plugin alone ("" if it ran).
inline std::string shape_error(const Op& op, const std::vector<Tensor>& inputs) {
  switchyard::Runtime rt(switchyard::Options{strict_config("shape")});
  auto model = load_graph(rt, one_node(op, inputs));
  return sytest::error_of([&] { model->run(inputs); });
}

inline std::string describe(const Op& op, const std::vector<Tensor>& inputs) {
  std::string s = op.op + " on";
  for (const Tensor& t : inputs) s += " " + switchyard::dtype_name(t.dtype()) + switchyard::shape_string(t.shape());
  return s;
}

// Runs on shape and on aten; every output must match in dtype, shape and bytes.
// Returns the shape plugin's outputs.
inline std::vector<Tensor> same_as_aten(const Op& op, const std::vector<Tensor>& inputs) {
  std::vector<Tensor> got = run_on("shape", op, inputs);
  std::vector<Tensor> want = run_on("aten", op, inputs);
  EXPECT_EQ(got.size(), want.size()) << describe(op, inputs);
  for (size_t i = 0; i < got.size() && i < want.size(); ++i) {
    EXPECT_EQ(got[i].shape(), want[i].shape()) << describe(op, inputs) << " output " << i;
    EXPECT_TRUE(switchyard::same_dtype(got[i].dtype(), want[i].dtype())) << describe(op, inputs);
    EXPECT_TRUE(bytes(got[i]) == bytes(want[i])) << describe(op, inputs) << " output " << i << " differs from aten";
  }
  return got;
}

// same_as_aten, plus: every output is a view into input 0's memory (zero-copy).
inline std::vector<Tensor> same_view_as_aten(const Op& op, const std::vector<Tensor>& inputs) {
  std::vector<Tensor> got = same_as_aten(op, inputs);
  for (size_t i = 0; i < got.size(); ++i)
    if (got[i].numel() > 0)
      EXPECT_TRUE(inside(got[i], inputs[0])) << describe(op, inputs) << " output " << i << " was copied";
  return got;
}

inline ir::Attribute I(int64_t v) { return ir::Attribute::of_int(v); }
inline ir::Attribute L(std::vector<int64_t> v) { return ir::Attribute::of_ints(std::move(v)); }
inline bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace shape_test
