// Conformance cases: views and reshapes, joins and splits, indexing, casts, creation,
// reductions.
#include "aten_harness.hpp"

using namespace sy_test;

namespace {
std::vector<at::Tensor> vec(const std::tuple<at::Tensor, at::Tensor>& t) { return {std::get<0>(t), std::get<1>(t)}; }
}  // namespace

// ---- views and reshapes (results are copies; values and shapes must match)
OP_CASE("aten::flatten", "defaults_and_range") {
  at::Tensor x = rnd(dt, {2, 3, 4});
  check("aten::flatten", {x}, {}, at::flatten(x));
  check("aten::flatten", {x}, Attrs().i("start_dim", 1), at::flatten(x, 1));
  at::Tensor xt = x.transpose(0, 2);
  check("aten::flatten", {xt}, Attrs().i("start_dim", 0).i("end_dim", 1), at::flatten(xt, 0, 1));
}
OP_CASE("aten::unflatten", "sizes") {
  at::Tensor x = rnd(dt, {2, 12});
  check("aten::unflatten", {x}, Attrs().i("dim", 1).ints("sizes", {3, -1}), at::unflatten(x, 1, {3, 4}));
}
OP_CASE("aten::reshape", "infer_and_strided") {
  at::Tensor x = rnd(dt, {2, 3, 4});
  check("aten::reshape", {x}, Attrs().ints("shape", {6, -1}), x.reshape({6, 4}));
  at::Tensor xt = x.transpose(1, 2);
  check("aten::reshape", {xt}, Attrs().ints("shape", {-1}), xt.reshape({-1}));
}
OP_CASE("aten::view", "size") {
  at::Tensor x = rnd(dt, {2, 3, 4});
  check("aten::view", {x}, Attrs().ints("size", {4, 6}), x.view({4, 6}));
}
OP_CASE("aten::_unsafe_view", "size") {
  at::Tensor x = rnd(dt, {2, 3, 4});
  check("aten::_unsafe_view", {x}, Attrs().ints("size", {24}), x.view({24}));
}
OP_CASE("aten::view_as", "other") {
  at::Tensor x = rnd(dt, {2, 6}), o = rnd(at::kFloat, {3, 4});
  check("aten::view_as", {x, o}, {}, x.view_as(o));
}
OP_CASE("aten::reshape_as", "other") {
  at::Tensor x = rnd(dt, {2, 6}).t(), o = rnd(at::kLong, {3, 4});
  check("aten::reshape_as", {x, o}, {}, x.reshape_as(o));
}
OP_CASE("aten::permute", "dims") {
  at::Tensor x = rnd(dt, {2, 3, 4});
  check("aten::permute", {x}, Attrs().ints("dims", {2, 0, 1}), x.permute({2, 0, 1}));
}
OP_CASE("aten::transpose", "dims") {
  at::Tensor x = rnd(dt, {2, 3, 4});
  check("aten::transpose", {x}, Attrs().i("dim0", 0).i("dim1", -1), x.transpose(0, -1));
}
OP_CASE("aten::t", "matrix") {
  at::Tensor x = rnd(dt, {2, 3});
  check("aten::t", {x}, {}, x.t());
}
OP_CASE("aten::movedim", "int_and_list") {
  at::Tensor x = rnd(dt, {2, 3, 4});
  check("aten::movedim", {x}, Attrs().i("source", 0).i("destination", 2), at::movedim(x, 0, 2));
  check("aten::movedim", {x}, Attrs().ints("source", {0, 1}).ints("destination", {2, 0}),
        at::movedim(x, {0, 1}, {2, 0}));
}
OP_CASE("aten::unsqueeze", "dim") {
  at::Tensor x = rnd(dt, {2, 3});
  check("aten::unsqueeze", {x}, Attrs().i("dim", 1), x.unsqueeze(1));
  check("aten::unsqueeze", {x}, Attrs().i("dim", -1), x.unsqueeze(-1));
}
OP_CASE("aten::squeeze", "all_and_dim") {
  at::Tensor x = rnd(dt, {2, 1, 3, 1});
  check("aten::squeeze", {x}, {}, x.squeeze());
  check("aten::squeeze", {x}, Attrs().i("dim", 1), x.squeeze(1));
}
OP_CASE("aten::expand", "size") {
  at::Tensor x = rnd(dt, {3, 1});
  check("aten::expand", {x}, Attrs().ints("size", {2, 3, 4}), x.expand({2, 3, 4}));
  check("aten::expand", {x}, Attrs().ints("size", {-1, 5}).b("implicit", false), x.expand({3, 5}));
}
OP_CASE("aten::expand_as", "other") {
  at::Tensor x = rnd(dt, {3, 1}), o = rnd(at::kFloat, {3, 4});
  check("aten::expand_as", {x, o}, {}, x.expand_as(o));
}
OP_CASE("aten::broadcast_to", "size") {
  at::Tensor x = rnd(dt, {4});
  check("aten::broadcast_to", {x}, Attrs().ints("size", {2, 4}), at::broadcast_to(x, {2, 4}));
}
OP_CASE("aten::contiguous", "strided_and_already") {
  at::Tensor x = rnd(dt, {3, 4});
  check("aten::contiguous", {x.t()}, {}, x.t().contiguous());
  check("aten::contiguous", {x}, {}, x);
  Result r = run("aten::contiguous", {x.t()});
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_TRUE(r.outputs[0].is_contiguous());
}
OP_CASE("aten::clone", "memory_format") {
  at::Tensor x = rnd(dt, {2, 3, 4, 5});
  check("aten::clone", {x}, {}, x.clone());
  check("aten::clone", {x}, Attrs().i("memory_format", static_cast<int64_t>(at::MemoryFormat::ChannelsLast)),
        x.clone(at::MemoryFormat::ChannelsLast));
}
#define SY_IDENTITY_CASE(NAME)          \
  OP_CASE("aten::" #NAME, "identity") { \
    at::Tensor x = rnd(dt, {3, 4});     \
    check("aten::" #NAME, {x}, {}, x);  \
  }
SY_IDENTITY_CASE(alias)
SY_IDENTITY_CASE(detach)
SY_IDENTITY_CASE(lift_fresh)

// ---- joins and splits
#define SY_CAT_CASE(NAME)                                                         \
  OP_CASE("aten::" #NAME, "list_dim_strided") {                                   \
    at::Tensor a = rnd(dt, {2, 3}), b = rnd(dt, {2, 4}), c = rnd(dt, {5, 2}).t(); \
    check("aten::" #NAME, {a, b, c}, Attrs().i("dim", 1), at::cat({a, b, c}, 1)); \
    check("aten::" #NAME, {a, a}, {}, at::cat({a, a}));                           \
    check("aten::" #NAME, {a}, Attrs().i("dim", -1), at::cat({a}, -1));           \
  }
SY_CAT_CASE(cat)
SY_CAT_CASE(concat)
OP_CASE("aten::stack", "dim") {
  at::Tensor a = rnd(dt, {2, 3}), b = rnd(dt, {2, 3});
  check("aten::stack", {a, b}, Attrs().i("dim", 1), at::stack({a, b}, 1));
}
// The host's pattern for ShuffleNet's cat + channel shuffle: output channel k * groups + j
// is channel j * (C / groups) + k of the concatenation (here by index_select).
OP_CASE("switchyard::channel_shuffle", "cat_then_shuffle") {
  at::Tensor a = rnd(dt, {2, 3, 2, 2}), b = rnd(dt, {2, 3, 2, 2});
  const at::Tensor order = at::tensor({0, 3, 1, 4, 2, 5}, at::kLong);
  check("switchyard::channel_shuffle", {a, b}, Attrs().i("groups", 2), at::cat({a, b}, 1).index_select(1, order));
  at::Tensor x = rnd(dt, {1, 6, 3, 1});  // one input, 3 groups of 2
  check("switchyard::channel_shuffle", {x}, Attrs().i("groups", 3),
        x.index_select(1, at::tensor({0, 2, 4, 1, 3, 5}, at::kLong)));
  Result r = run("switchyard::channel_shuffle", {a, b}, Attrs().i("groups", 4));
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.message.find("do not split into 4 groups"), std::string::npos) << r.message;
}
OP_CASE("aten::hstack", "list") {
  at::Tensor a = rnd(dt, {2, 3}), b = rnd(dt, {2, 1});
  check("aten::hstack", {a, b}, {}, at::hstack({a, b}));
}
OP_CASE("aten::vstack", "list") {
  at::Tensor a = rnd(dt, {2, 3}), b = rnd(dt, {1, 3});
  check("aten::vstack", {a, b}, {}, at::vstack({a, b}));
}
OP_CASE("aten::split", "size_and_sizes") {
  at::Tensor x = rnd(dt, {5, 4});
  check("aten::split", {x}, Attrs().i("split_size", 2), at::split(x, 2));
  check("aten::split", {x}, Attrs().ints("split_size", {1, 3}).i("dim", 1), at::split_with_sizes(x, {1, 3}, 1));
}
OP_CASE("aten::split_with_sizes", "sizes") {
  at::Tensor x = rnd(dt, {5, 4});
  check("aten::split_with_sizes", {x}, Attrs().ints("split_sizes", {2, 3}), at::split_with_sizes(x, {2, 3}));
}
OP_CASE("aten::chunk", "chunks") {
  at::Tensor x = rnd(dt, {6, 4});
  check("aten::chunk", {x}, Attrs().i("chunks", 3), at::chunk(x, 3));
  check("aten::chunk", {x}, Attrs().i("chunks", 2).i("dim", 1), at::chunk(x, 2, 1));
}
OP_CASE("aten::unbind", "dim") {
  at::Tensor x = rnd(dt, {3, 2});
  check("aten::unbind", {x}, {}, at::unbind(x));
  check("aten::unbind", {x}, Attrs().i("dim", 1), at::unbind(x, 1));
}
OP_CASE("aten::flip", "dims") {
  at::Tensor x = rnd(dt, {3, 4});
  check("aten::flip", {x}, Attrs().ints("dims", {0, 1}), at::flip(x, {0, 1}));
}
OP_CASE("aten::roll", "shifts") {
  at::Tensor x = rnd(dt, {3, 4});
  check("aten::roll", {x}, Attrs().i("shifts", 1).i("dims", 1), at::roll(x, {1}, {1}));
  check("aten::roll", {x}, Attrs().i("shifts", 2), at::roll(x, {2}));
}
OP_CASE("aten::repeat", "repeats") {
  at::Tensor x = rnd(dt, {2, 3});
  check("aten::repeat", {x}, Attrs().ints("repeats", {2, 1, 2}), x.repeat({2, 1, 2}));
}
OP_CASE("aten::tile", "dims") {
  at::Tensor x = rnd(dt, {2, 3});
  check("aten::tile", {x}, Attrs().ints("dims", {2}), at::tile(x, {2}));
}
OP_CASE("aten::repeat_interleave", "int_repeats") {
  at::Tensor x = rnd(dt, {2, 3});
  check("aten::repeat_interleave", {x}, Attrs().i("repeats", 2).i("dim", 1), at::repeat_interleave(x, 2, 1));
}

// ---- indexing
OP_CASE("aten::select", "dim_index") {
  at::Tensor x = rnd(dt, {3, 4});
  check("aten::select", {x}, Attrs().i("dim", 1).i("index", -1), x.select(1, -1));
}
OP_CASE("aten::slice", "start_end_step") {
  at::Tensor x = rnd(dt, {6, 4});
  check("aten::slice", {x}, Attrs().i("dim", 0).i("start", 1).i("end", 5).i("step", 2), x.slice(0, 1, 5, 2));
  check("aten::slice", {x}, Attrs().i("dim", 1).none("start").i("end", -1), at::slice(x, 1, c10::nullopt, -1));
}
OP_CASE("aten::narrow", "start_length") {
  at::Tensor x = rnd(dt, {6, 4});
  check("aten::narrow", {x}, Attrs().i("dim", 0).i("start", 2).i("length", 3), x.narrow(0, 2, 3));
}
OP_CASE("aten::unfold", "windows") {
  at::Tensor x = rnd(dt, {2, 7});
  check("aten::unfold", {x}, Attrs().i("dimension", 1).i("size", 3).i("step", 2), x.unfold(1, 3, 2));
}
OP_CASE("aten::index", "optional_index_list") {
  at::Tensor x = rnd(dt, {4, 5}), i0 = at::tensor({0, 2, 3}, at::kLong), i1 = at::tensor({1, 1, 4}, at::kLong);
  c10::List<c10::optional<at::Tensor>> both({i0, i1}), second({c10::nullopt, i1});
  check("aten::index", {x, i0, i1}, {}, at::index(x, both));
  check("aten::index", {x, at::Tensor(), i1}, {}, at::index(x, second));
  at::Tensor mask = x.to(at::kFloat) > 0;
  check("aten::index", {x, mask}, {}, at::index(x, c10::List<c10::optional<at::Tensor>>({mask})));
}
OP_CASE("aten::index_select", "int32_int64") {
  at::Tensor x = rnd(dt, {4, 5}), i = at::tensor({3, 0, 3}, at::kLong);
  check("aten::index_select", {x, i}, Attrs().i("dim", 1), at::index_select(x, 1, i));
  check("aten::index_select", {x, i.to(at::kInt)}, Attrs().i("dim", 0), at::index_select(x, 0, i.to(at::kInt)));
}
OP_CASE("aten::gather", "dim") {
  at::Tensor x = rnd(dt, {3, 4}), i = at::randint(0, 4, {3, 2}, at::kLong);
  check("aten::gather", {x, i}, Attrs().i("dim", 1), at::gather(x, 1, i));
}
OP_CASE("aten::scatter", "src_and_value") {
  at::Tensor x = rnd(dt, {3, 4}), src = rnd(dt, {3, 4}), i = at::tensor({0, 2, 3}, at::kLong).view({3, 1});
  check("aten::scatter", {x, i, src}, Attrs().i("dim", 1), at::scatter(x, 1, i, src));
  check("aten::scatter", {x, i}, Attrs().i("dim", 1).i("value", 1), at::scatter(x, 1, i, 1));
}
OP_CASE("aten::scatter_add", "dim") {
  at::Tensor x = rnd(dt, {3, 4}), src = rnd(dt, {3, 2}), i = at::randint(0, 4, {3, 2}, at::kLong);
  check("aten::scatter_add", {x, i, src}, Attrs().i("dim", 1), at::scatter_add(x, 1, i, src));
}
OP_CASE("aten::slice_scatter", "range") {
  at::Tensor x = rnd(dt, {6, 4}), src = rnd(dt, {2, 4});
  check("aten::slice_scatter", {x, src}, Attrs().i("start", 1).i("end", 5).i("step", 2),
        at::slice_scatter(x, src, 0, 1, 5, 2));
}
OP_CASE("aten::select_scatter", "index") {
  at::Tensor x = rnd(dt, {3, 4}), src = rnd(dt, {3});
  check("aten::select_scatter", {x, src}, Attrs().i("dim", 1).i("index", 2), at::select_scatter(x, src, 1, 2));
}
OP_CASE("aten::masked_select", "mask") {
  at::Tensor x = rnd(dt, {3, 4}), m = rnd(at::kBool, {4});
  check("aten::masked_select", {x, m}, {}, at::masked_select(x, m));
}
OP_CASE("aten::nonzero", "dynamic_shape") {
  at::Tensor x = rnd(dt, {3, 4});
  check("aten::nonzero", {x}, {}, at::nonzero(x));
}
OP_CASE("aten::triu", "diagonal") {
  at::Tensor x = rnd(dt, {4, 5});
  check("aten::triu", {x}, {}, at::triu(x));
  check("aten::triu", {x}, Attrs().i("diagonal", 1), at::triu(x, 1));
}
OP_CASE("aten::tril", "diagonal") {
  at::Tensor x = rnd(dt, {4, 5});
  check("aten::tril", {x}, Attrs().i("diagonal", -1), at::tril(x, -1));
}

// ---- casts
OP_CASE("aten::to", "dtype_other_device_layout") {
  at::Tensor x = rnd(dt, {3, 4});
  check("aten::to", {x}, Attrs().dtype("dtype", at::kFloat), x.to(at::kFloat));
  check("aten::to", {x}, Attrs().dtype("dtype", dt), x);  // same dtype: a copy, equal values
  at::Tensor o = rnd(at::kLong, {1});
  check("aten::to", {x, o}, {}, x.to(o));
  check("aten::to", {x}, Attrs().s("device", "cpu").dtype("dtype", at::kDouble), x.to(at::kDouble));
  check("aten::to", {x}, Attrs().dtype("dtype", at::kInt).i("layout", 0).none("device"), x.to(at::kInt));
}
OP_CASE("aten::_to_copy", "dtype") {
  at::Tensor x = rnd(dt, {3, 4});
  check("aten::_to_copy", {x}, Attrs().dtype("dtype", at::kHalf), x.to(at::kHalf));
  check("aten::_to_copy", {x}, {}, x.clone());
}
OP_CASE("aten::type_as", "other") {
  at::Tensor x = rnd(dt, {3, 4}), o = rnd(at::kDouble, {1});
  check("aten::type_as", {x, o}, {}, x.type_as(o));
}

// ---- creation (dtype attributes; the case dtype is the requested one)
OP_CASE("aten::arange", "end_and_start_step") {
  check("aten::arange", {}, Attrs().i("end", 5).dtype("dtype", dt), at::arange(5, at::TensorOptions(dt)));
  check("aten::arange", {}, Attrs().i("start", 1).i("end", 9).i("step", 3).dtype("dtype", dt),
        at::arange(1, 9, 3, at::TensorOptions(dt)));
}
OP_CASE("aten::arange", "inferred_dtype", at::kFloat) {
  check("aten::arange", {}, Attrs().i("end", 4), at::arange(4));
  check("aten::arange", {}, Attrs().f("start", 0.5).f("end", 2.0).f("step", 0.5), at::arange(0.5, 2.0, 0.5));
}
#define SY_FILL_CASE(NAME)                                                     \
  OP_CASE("aten::" #NAME, "size_dtype") {                                      \
    check("aten::" #NAME, {}, Attrs().ints("size", {2, 3}).dtype("dtype", dt), \
          at::NAME({2, 3}, at::TensorOptions(dt)));                            \
  }
SY_FILL_CASE(zeros)
SY_FILL_CASE(ones)
OP_CASE("aten::full", "value") {
  check("aten::full", {}, Attrs().ints("size", {2, 3}).i("fill_value", 1).dtype("dtype", dt),
        at::full({2, 3}, 1, at::TensorOptions(dt)));
}
OP_CASE("aten::scalar_tensor", "value") {
  check("aten::scalar_tensor", {}, Attrs().i("s", 1).dtype("dtype", dt), at::scalar_tensor(1, at::TensorOptions(dt)));
}
OP_CASE("aten::zeros_like", "dtype") {
  at::Tensor x = rnd(dt, {2, 3});
  check("aten::zeros_like", {x}, {}, at::zeros_like(x));
  check("aten::zeros_like", {x}, Attrs().dtype("dtype", at::kFloat), at::zeros_like(x, at::kFloat));
}
OP_CASE("aten::ones_like", "plain") {
  at::Tensor x = rnd(dt, {2, 3});
  check("aten::ones_like", {x}, {}, at::ones_like(x));
}
OP_CASE("aten::full_like", "value") {
  at::Tensor x = rnd(dt, {2, 3});
  check("aten::full_like", {x}, Attrs().i("fill_value", 1), at::full_like(x, 1));
}
OP_CASE("aten::new_zeros", "size") {
  at::Tensor x = rnd(dt, {2});
  check("aten::new_zeros", {x}, Attrs().ints("size", {3, 2}), x.new_zeros({3, 2}));
}
OP_CASE("aten::new_ones", "size") {
  at::Tensor x = rnd(dt, {2});
  check("aten::new_ones", {x}, Attrs().ints("size", {3}).dtype("dtype", at::kInt), x.new_ones({3}, at::kInt));
}
OP_CASE("aten::fill", "value") {
  at::Tensor x = rnd(dt, {2, 3});
  check("aten::fill", {x}, Attrs().i("value", 1), at::fill(x, 1));
}

// ---- reductions
OP_CASE("aten::sum", "dims_keepdim_all_dtype") {
  at::Tensor x = rnd(dt, {2, 3, 4});
  check("aten::sum", {x}, Attrs().ints("dim", {1, 2}), at::sum(x, {1, 2}));
  check("aten::sum", {x}, Attrs().i("dim", -1).b("keepdim", true), at::sum(x, {-1}, true));
  check("aten::sum", {x}, {}, at::sum(x));
  check("aten::sum", {x}, Attrs().none("dim").dtype("dtype", at::kDouble), at::sum(x, at::kDouble));
  check("aten::sum", {x.transpose(0, 2)}, Attrs().i("dim", 0), at::sum(x.transpose(0, 2), {0}));
}
OP_CASE("aten::mean", "dims_keepdim_all") {
  at::Tensor x = rnd(dt, {2, 3, 4});
  check("aten::mean", {x}, Attrs().ints("dim", {-1}).b("keepdim", true), at::mean(x, at::IntArrayRef{-1}, true));
  check("aten::mean", {x}, {}, at::mean(x));
  check("aten::mean", {x}, Attrs().ints("dim", {0, 2}), at::mean(x, at::IntArrayRef{0, 2}));
}
OP_CASE("aten::prod", "dim_and_all") {
  at::Tensor x = rnd(dt, {2, 3});
  check("aten::prod", {x}, Attrs().i("dim", 1), at::prod(x, 1));
  check("aten::prod", {x}, {}, at::prod(x));
}
#define SY_AMAX_CASE(NAME)                                                  \
  OP_CASE("aten::" #NAME, "dims") {                                         \
    at::Tensor x = rnd(dt, {2, 3, 4});                                      \
    check("aten::" #NAME, {x}, Attrs().ints("dim", {1}), at::NAME(x, {1})); \
    check("aten::" #NAME, {x}, {}, at::NAME(x));                            \
  }
SY_AMAX_CASE(amax)
SY_AMAX_CASE(amin)
#define SY_MAX_CASE(NAME)                                                                                  \
  OP_CASE("aten::" #NAME, "dim_other_all") {                                                               \
    at::Tensor x = rnd(dt, {3, 4}), y = rnd(dt, {4});                                                      \
    check("aten::" #NAME, {x}, Attrs().i("dim", 1), vec(at::NAME(x, 1)));                                  \
    check("aten::" #NAME, {x}, Attrs().i("dim", 0).b("keepdim", true), std::get<0>(at::NAME(x, 0, true))); \
    check("aten::" #NAME, {x, y}, {}, at::NAME(x, y));                                                     \
    check("aten::" #NAME, {x}, {}, at::NAME(x));                                                           \
  }
SY_MAX_CASE(max)
SY_MAX_CASE(min)
#define SY_ARG_CASE(NAME)                                            \
  OP_CASE("aten::" #NAME, "dim_and_flat") {                          \
    at::Tensor x = rnd(dt, {3, 4});                                  \
    check("aten::" #NAME, {x}, Attrs().i("dim", 1), at::NAME(x, 1)); \
    check("aten::" #NAME, {x}, {}, at::NAME(x));                     \
  }
SY_ARG_CASE(argmax)
SY_ARG_CASE(argmin)
#define SY_ANY_CASE(NAME)                                            \
  OP_CASE("aten::" #NAME, "dim_and_all") {                           \
    at::Tensor x = rnd(dt, {3, 4});                                  \
    check("aten::" #NAME, {x}, Attrs().i("dim", 1), at::NAME(x, 1)); \
    check("aten::" #NAME, {x}, {}, at::NAME(x));                     \
  }
SY_ANY_CASE(any)
SY_ANY_CASE(all)
OP_CASE("aten::cumsum", "dim_dtype") {
  at::Tensor x = rnd(dt, {3, 4});
  check("aten::cumsum", {x}, Attrs().i("dim", 1), at::cumsum(x, 1));
  check("aten::cumsum", {x}, Attrs().i("dim", 0).dtype("dtype", at::kDouble), at::cumsum(x, 0, at::kDouble));
}
OP_CASE("aten::cumprod", "dim") {
  at::Tensor x = rnd(dt, {3, 4});
  check("aten::cumprod", {x}, Attrs().i("dim", 1), at::cumprod(x, 1));
}
#define SY_VAR_CASE(NAME)                                                                        \
  OP_CASE("aten::" #NAME, "unbiased_and_correction") {                                           \
    at::Tensor x = rnd(dt, {3, 4});                                                              \
    check("aten::" #NAME, {x}, Attrs().ints("dim", {1}), at::NAME(x, {1}));                      \
    check("aten::" #NAME, {x}, Attrs().ints("dim", {1}).b("unbiased", false).b("keepdim", true), \
          at::NAME(x, {1}, false, true));                                                        \
    check("aten::" #NAME, {x}, Attrs().none("dim").i("correction", 0),                           \
          at::NAME(x, c10::nullopt, c10::optional<int64_t>(0)));                                 \
  }
SY_VAR_CASE(var)
SY_VAR_CASE(std)
OP_CASE("aten::logsumexp", "dim") {
  at::Tensor x = rnd(dt, {3, 4});
  check("aten::logsumexp", {x}, Attrs().i("dim", 1), at::logsumexp(x, {1}));
}
OP_CASE("aten::norm", "p_dim") {
  at::Tensor x = rnd(dt, {3, 4});
  check("aten::norm", {x}, {}, at::norm(x));
  check("aten::norm", {x}, Attrs().i("p", 1).ints("dim", {1}), at::norm(x, 1, {1}));
}
OP_CASE("aten::linalg_vector_norm", "ord_dim") {
  at::Tensor x = rnd(dt, {3, 4});
  check("aten::linalg_vector_norm", {x}, {}, at::linalg_vector_norm(x));
  check("aten::linalg_vector_norm", {x}, Attrs().i("ord", 1).ints("dim", {0}), at::linalg_vector_norm(x, 1, {0}));
}
OP_CASE("aten::count_nonzero", "dim") {
  at::Tensor x = rnd(dt, {3, 4});
  check("aten::count_nonzero", {x}, {}, at::count_nonzero(x));
  check("aten::count_nonzero", {x}, Attrs().i("dim", 1), at::count_nonzero(x, c10::optional<int64_t>(1)));
}
OP_CASE("aten::topk", "k_dim") {
  at::Tensor x = at::randperm(12, at::kLong).to(dt).reshape({3, 4});  // distinct: ties order-free
  check("aten::topk", {x}, Attrs().i("k", 2), vec(at::topk(x, 2)));
  check("aten::topk", {x}, Attrs().i("k", 1).i("dim", 0).b("largest", false), vec(at::topk(x, 1, 0, false)));
}
OP_CASE("aten::sort", "descending") {
  at::Tensor x = rnd(dt, {3, 4});
  check("aten::sort", {x}, Attrs().i("dim", 1).b("descending", true), vec(at::sort(x, 1, true)));
}
OP_CASE("aten::argsort", "dim") {
  at::Tensor x = rnd(dt, {3, 4});
  check("aten::argsort", {x}, {}, at::argsort(x));
}
