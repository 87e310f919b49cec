// The shape plugin's copying ops and multi-output splits against the aten reference:
// contiguous (a no-op view on contiguous input, a copy otherwise: transposed, sliced,
// broadcast, high-rank), cat and stack (dims, non-contiguous parts, ATen's skip of
// empty 1-D inputs), split / split_with_sizes / chunk / unbind (every piece a view),
// and every dtype through each kind of kernel, including the zoo's shapes.
#include "shape_test_util.hpp"

using namespace shape_test;
using switchyard::Tensor;

namespace {

// A non-contiguous [rows, cols] view: every other row of a fresh buffer, from column 1.
Tensor strided_rows(DLDataType dtype, int64_t rows, int64_t cols) {
  Tensor buffer = filled(dtype, {2 * rows, cols + 1}, 7);
  const size_t es = switchyard::dtype_size(dtype);
  return Tensor::from_blob(static_cast<char*>(buffer.raw_data()) + es, dtype, {rows, cols}, {2 * (cols + 1), 1},
                           [buffer] {});
}

// ---- contiguous -----------------------------------------------------------------------

TEST(ShapeContiguous, AContiguousInputIsReturnedAsIs) {
  Tensor x = filled(kF32, {4, 5});
  std::vector<Tensor> y = same_view_as_aten({"aten::contiguous", {{"memory_format", I(0)}}}, {x});
  EXPECT_EQ(y[0].raw_data(), x.raw_data());
  // size-1 dims' strides don't matter (ATen's rule)
  Tensor odd = Tensor::from_blob(x.raw_data(), kF32, {4, 1, 5}, {5, 99, 1}, [x] {});
  y = same_view_as_aten({"aten::contiguous", {}}, {odd});
  EXPECT_EQ(y[0].raw_data(), x.raw_data());
}

TEST(ShapeContiguous, NonContiguousInputsAreCopied) {
  Tensor row = filled(kF32, {1, 7});
  const std::vector<Tensor> inputs = {
      transposed_copy(filled(kF32, {3, 5})),                              // a 2-D transpose
      transposed_copy(filled(kF32, {2, 64, 3})),                          // batched, short inner runs
      strided_rows(kF32, 5, 40),                                          // row runs with gaps
      strided_rows(kF32, 3, 2),                                           // runs shorter than a memcpy is worth
      Tensor::from_blob(row.raw_data(), kF32, {4, 7}, {0, 1}, [row] {}),  // broadcast rows
  };
  for (const Tensor& x : inputs) {
    ASSERT_FALSE(x.is_contiguous());
    std::vector<Tensor> y = same_as_aten({"aten::contiguous", {}}, {x});
    EXPECT_TRUE(y[0].is_contiguous());
    EXPECT_FALSE(inside(y[0], x));
  }
  // broadcast innermost: a column expanded along the last dim
  Tensor col = filled(kI16, {5});
  same_as_aten({"aten::contiguous", {}}, {Tensor::from_blob(col.raw_data(), kI16, {5, 6}, {1, 0}, [col] {})});
}

TEST(ShapeContiguous, ZooLayouts) {
  // a chunk of a fused QKV projection [T, B, 3E] -> [T, B, E] (ViT: T=197, E=768)
  Tensor qkv = filled(kF32, {197, 2, 3 * 768});
  Tensor q = Tensor::from_blob(static_cast<float*>(qkv.raw_data()) + 768, kF32, {197, 2, 768},
                               {2 * 3 * 768, 3 * 768, 1}, [qkv] {});
  same_as_aten({"aten::contiguous", {}}, {q});
  // bmm output [B*H, T, D] transposed to [T, B*H, D] (BERT: T=48, H=4, D=32)
  Tensor attn = filled(kF32, {8, 48, 32});
  Tensor t = Tensor::from_blob(attn.raw_data(), kF32, {48, 8, 32}, {32, 48 * 32, 1}, [attn] {});
  same_as_aten({"aten::contiguous", {}}, {t});
  // ViT's patch embedding permute(0, 2, 1): a full transpose of [B, 768, 196]
  Tensor patches = filled(kF32, {2, 768, 196});
  same_as_aten({"aten::contiguous", {}},
               {Tensor::from_blob(patches.raw_data(), kF32, {2, 196, 768}, {768 * 196, 1, 196}, [patches] {})});
}

// Copies of 1 MB and more are split over the SDK's worker pool: memcpy runs (a chunk of a
// wide row) and the element-wise walk (a broadcast oneDNN cannot express).
TEST(ShapeContiguous, LargeCopiesSplitOverThreads) {
  Tensor wide = filled(kF32, {300, 2, 3 * 768});
  same_as_aten({"aten::contiguous", {}}, {Tensor::from_blob(static_cast<float*>(wide.raw_data()) + 768, kF32,
                                                            {300, 2, 768}, {2 * 3 * 768, 3 * 768, 1}, [wide] {})});
  Tensor col = filled(kI32, {512});
  same_as_aten({"aten::contiguous", {}}, {Tensor::from_blob(col.raw_data(), kI32, {512, 1024}, {1, 0}, [col] {})});
}

TEST(ShapeContiguous, HighRankAndPermutedInputs) {
  Tensor x = filled(kI64, {2, 3, 1, 4, 2, 3});
  Shape dims = {5, 0, 3, 1, 4, 2};
  Shape shape, strides;
  for (int64_t d : dims) shape.push_back(x.shape()[d]), strides.push_back(x.strides()[d]);
  same_as_aten({"aten::contiguous", {}}, {Tensor::from_blob(x.raw_data(), kI64, shape, strides, [x] {})});
}

// ---- cat and stack ---------------------------------------------------------------------

TEST(ShapeJoins, CatAlongEachDim) {
  Tensor a = filled(kF32, {2, 3, 4}, 1), b = filled(kF32, {2, 3, 4}, 2);
  for (int64_t dim : {0, 1, 2, -1, -3}) same_as_aten({"aten::cat", {{"dim", I(dim)}}}, {a, b});
  same_as_aten({"aten::cat", {{"dim", I(1)}}}, {a, filled(kF32, {2, 5, 4}, 3), filled(kF32, {2, 1, 4}, 4)});
  same_as_aten({"aten::cat", {}}, {a});
  same_as_aten({"aten::concat", {{"dim", I(2)}}}, {a, b});
}

TEST(ShapeJoins, CatOfNonContiguousAndBroadcastParts) {
  Tensor t = transposed_copy(filled(kF64, {3, 4}));
  same_as_aten({"aten::cat", {{"dim", I(0)}}}, {t, strided_rows(kF64, 2, 4)});
  same_as_aten({"aten::cat", {{"dim", I(1)}}}, {t, filled(kF64, {3, 2})});
  // ViT's class token: a [1, 1, 768] expanded to the batch, then the patches
  Tensor token = filled(kF32, {1, 1, 768});
  Tensor tokens = Tensor::from_blob(token.raw_data(), kF32, {4, 1, 768}, {0, 768, 1}, [token] {});
  same_as_aten({"aten::cat", {{"dim", I(1)}}}, {tokens, filled(kF32, {4, 196, 768})});
}

TEST(ShapeJoins, CatSkipsEmptyOneDimInputsLikeATen) {
  Tensor a = filled(kI32, {2, 3});
  same_as_aten({"aten::cat", {{"dim", I(1)}}}, {filled(kI32, {0}), a, filled(kI32, {0})});
  same_as_aten({"aten::cat", {{"dim", I(0)}}}, {filled(kI32, {0, 3}), a});
  same_as_aten({"aten::cat", {}}, {filled(kI32, {0}), filled(kI32, {0})});
}

TEST(ShapeJoins, CatRejections) {
  Tensor a = filled(kF32, {2, 3});
  std::string msg = shape_error({"aten::cat", {{"dim", I(0)}}}, {a, filled(kF32, {2, 4})});
  EXPECT_TRUE(contains(msg, "Sizes of tensors must match except in dimension 0. Expected size 3 but got size 4"))
      << msg;
  msg = shape_error({"aten::cat", {}}, {a, filled(kF64, {2, 3})});
  EXPECT_TRUE(contains(msg, "input 1 has another dtype than input 0")) << msg;
  msg = shape_error({"aten::cat", {}}, {a, filled(kF32, {2, 3, 1})});
  EXPECT_TRUE(contains(msg, "same number of dimensions")) << msg;
  msg = shape_error({"aten::cat", {}}, {filled(kF32, {})});
  EXPECT_TRUE(contains(msg, "zero-dimensional tensor (at position 0) cannot be concatenated")) << msg;
  msg = shape_error({"aten::cat", {{"dim", I(2)}}}, {a, a});
  EXPECT_TRUE(contains(msg, "dimension out of range")) << msg;
}

TEST(ShapeJoins, Stack) {
  Tensor a = filled(kBool, {2, 3}, 1), b = filled(kBool, {2, 3}, 2), c = transposed_copy(filled(kBool, {2, 3}, 3));
  for (int64_t dim : {0, 1, 2, -1, -3}) same_as_aten({"aten::stack", {{"dim", I(dim)}}}, {a, b, c});
  same_as_aten({"aten::stack", {}}, {filled(kBool, {})});
  std::string msg = shape_error({"aten::stack", {}}, {a, filled(kBool, {3, 2})});
  EXPECT_TRUE(contains(msg, "stack expects each tensor to be equal size")) << msg;
}

// ---- splits: every piece is a view ------------------------------------------------------

TEST(ShapeSplits, ChunkAsTheZooUsesIt) {
  // The fused QKV projection split three ways along the last dim (GPT: [64, B, 384]).
  Tensor x = filled(kF32, {64, 2, 384});
  std::vector<Tensor> y = same_view_as_aten({"aten::chunk", {{"chunks", I(3)}, {"dim", I(-1)}}, 3}, {x});
  ASSERT_EQ(y.size(), 3u);
  EXPECT_EQ(y[1].raw_data(), static_cast<const void*>(static_cast<float*>(x.raw_data()) + 128));
}

TEST(ShapeSplits, UnevenAndEmptyPieces) {
  Tensor x = filled(kI8, {5, 4});
  same_view_as_aten({"aten::chunk", {{"chunks", I(4)}}, 3}, {x});  // 2 + 2 + 1: fewer pieces than chunks
  same_view_as_aten({"aten::chunk", {{"chunks", I(2)}, {"dim", I(1)}}, 2}, {transposed_copy(x)});
  same_view_as_aten({"aten::chunk", {{"chunks", I(3)}}, 3}, {filled(kI8, {0, 2})});
  same_view_as_aten({"aten::split", {{"split_size", I(2)}}, 3}, {x});
  same_view_as_aten({"aten::split", {{"split_size", I(5)}, {"dim", I(0)}}, 1}, {x});
  same_view_as_aten({"aten::split", {{"split_size", I(3)}, {"dim", I(-1)}}, 2}, {x});
  same_view_as_aten({"aten::split", {{"split_size", L({1, 0, 4})}}, 3}, {x});
  same_view_as_aten({"aten::split_with_sizes", {{"split_sizes", L({3, 1})}, {"dim", I(1)}}, 2}, {x});
  same_view_as_aten({"aten::unbind", {}, 5}, {x});
  same_view_as_aten({"aten::unbind", {{"dim", I(-1)}}, 4}, {transposed_copy(x)});
}

TEST(ShapeSplits, Rejections) {
  Tensor x = filled(kF32, {5, 4});
  EXPECT_TRUE(contains(shape_error({"aten::split_with_sizes", {{"split_sizes", L({3, 1})}}, 2}, {x}),
                       "split_sizes to sum exactly to 5"));
  EXPECT_TRUE(contains(shape_error({"aten::split", {{"split_size", I(0)}}, 1}, {x}),
                       "split_size can only be 0 if dimension size is 0"));
  EXPECT_TRUE(contains(shape_error({"aten::chunk", {{"chunks", I(0)}}, 1}, {x}),
                       "chunk expects `chunks` to be greater than 0"));
  EXPECT_TRUE(contains(shape_error({"aten::unbind", {}, 1}, {filled(kF32, {})}), "at least a 1-dimensional tensor"));
  EXPECT_TRUE(contains(shape_error({"aten::unbind", {}, 4}, {x}), "makes 5 output(s) for these arguments, node has 4"));
}

// ---- gathers -------------------------------------------------------------------------------

Tensor index_tensor(std::vector<int64_t> values, Shape shape) {
  Tensor t = Tensor::empty(kI64, std::move(shape));
  for (size_t i = 0; i < values.size(); ++i) t.data<int64_t>()[i] = values[i];
  return t;
}

TEST(ShapeGathers, EmbeddingPicksRowsLikeATen) {
  same_as_aten({"aten::embedding", {}}, {filled(kF32, {7, 5}), index_tensor({6, 0, 3, 3, 1, 6}, {2, 3})});
  same_as_aten({"aten::embedding", {{"padding_idx", I(0)}}}, {filled(kBF16, {4, 3}), index_tensor({0, 2}, {2})});
  same_as_aten({"aten::embedding", {}}, {transposed_copy(filled(kI16, {6, 4})), index_tensor({5, 1}, {2})});
}

TEST(ShapeGathers, EmbeddingIndexOutOfRangeIsAnErrorNamingIt) {
  // Never a read outside the table: the run fails, naming the index and the table's rows.
  const Tensor table = filled(kF32, {5, 3});
  std::string msg = shape_error({"aten::embedding", {}}, {table, index_tensor({1, 5}, {2})});
  EXPECT_TRUE(contains(msg, "index 5 is out of range for a table of 5 rows")) << msg;
  msg = shape_error({"aten::embedding", {}}, {table, index_tensor({-1}, {1})});
  EXPECT_TRUE(contains(msg, "index -1 is out of range")) << msg;
}

// ---- every dtype through every kind of kernel --------------------------------------------

TEST(ShapeDtypes, EveryDtypeThroughViewsCopiesJoinsAndSplits) {
  for (DLDataType dt : all_dtypes()) {
    SCOPED_TRACE(switchyard::dtype_name(dt));
    Tensor x = filled(dt, {3, 4, 5}, 3);
    Tensor xt = transposed_copy(x);
    same_view_as_aten({"aten::permute", {{"dims", L({1, 2, 0})}}}, {x});
    same_view_as_aten({"aten::view", {{"size", L({12, 5})}}}, {x});
    same_view_as_aten({"aten::slice", {{"dim", I(2)}, {"start", I(1)}, {"end", I(-1)}, {"step", I(2)}}}, {xt});
    same_view_as_aten({"aten::select", {{"dim", I(-1)}, {"index", I(-2)}}}, {x});
    same_view_as_aten({"aten::expand", {{"size", L({2, -1, -1, -1})}}}, {x});
    same_view_as_aten({"aten::squeeze", {}}, {filled(dt, {1, 4, 1})});
    same_view_as_aten({"aten::unsqueeze", {{"dim", I(-2)}}}, {xt});
    same_view_as_aten({"aten::chunk", {{"chunks", I(2)}, {"dim", I(1)}}, 2}, {xt});
    same_view_as_aten({"aten::unbind", {{"dim", I(0)}}, 3}, {x});
    same_as_aten({"aten::contiguous", {}}, {xt});
    same_as_aten({"aten::reshape", {{"shape", L({-1})}}}, {xt});
    same_as_aten({"aten::flatten", {{"start_dim", I(1)}}}, {xt});
    same_as_aten({"aten::cat", {{"dim", I(-1)}}}, {x, xt, filled(dt, {3, 4, 2}, 5)});
    same_as_aten({"aten::stack", {{"dim", I(1)}}}, {x, xt});
  }
}

}  // namespace
