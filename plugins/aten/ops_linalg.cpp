// aten plugin: matrix products, convolution, attention.
// One table line per ATen overload; see aten_ops.hpp for the schema conventions.
#include "aten_ops.hpp"

#include <cmath>

namespace sy_aten {
namespace {

constexpr DtypeMask kFI = kF | kI;  // ATen 1.13 CPU GEMM/conv: no float16, no bool
constexpr DtypeMask kF32_64 = bit(at::kFloat) | bit(at::kDouble);

at::Tensor conv2d(const Call& c) {
  return at::conv2d(c.t(0), c.t(1), c.ot(2), c.ints(3), c.ints(4), c.ints(5), c.i(6));
}

// PyTorch 2.x's public attention op, on 1.13's private math implementation.
at::Tensor sdpa(const Call& c) {
  at::Tensor q = c.t(0), k = c.t(1), v = c.t(2);
  if (!c.none(6)) {  // explicit scale: 1.13 always scales by 1/sqrt(E), so pre-scale q
    double e = static_cast<double>(q.size(-1));
    q = q * (c.f(6) * std::sqrt(e));
  }
  if (c.b(7)) {  // enable_gqa: each key/value head serves Hq / Hkv query heads, as PyTorch repeats them
    if (q.dim() < 3 || k.dim() < 3 || v.dim() < 3 || k.size(-3) == 0 || q.size(-3) % k.size(-3) != 0)
      throw sy::Error("enable_gqa: query heads are no multiple of key heads");
    const int64_t group = q.size(-3) / k.size(-3);
    k = k.repeat_interleave(group, -3);
    v = v.repeat_interleave(group, -3);
  }
  return std::get<0>(at::_scaled_dot_product_attention(q, k, v, c.ot(3), c.f(4), /*need_attn_weights=*/false, c.b(5)));
}

}  // namespace

void register_linalg_ops(Registry& r) {
  r.family("linalg");
  r.def("linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor", kFI,
        [](const Call& c) { return at::linear(c.t(0), c.t(1), c.ot(2)); });
  r.def("matmul(Tensor self, Tensor other) -> Tensor", kFI, [](const Call& c) { return at::matmul(c.t(0), c.t(1)); });
  r.def("mm(Tensor self, Tensor mat2) -> Tensor", kFI, [](const Call& c) { return at::mm(c.t(0), c.t(1)); });
  r.def("bmm(Tensor self, Tensor mat2) -> Tensor", kFI, [](const Call& c) { return at::bmm(c.t(0), c.t(1)); });
  r.def("mv(Tensor self, Tensor vec) -> Tensor", kFI, [](const Call& c) { return at::mv(c.t(0), c.t(1)); });
  r.def("dot(Tensor self, Tensor tensor) -> Tensor", kFI, [](const Call& c) { return at::dot(c.t(0), c.t(1)); });
  r.def("outer(Tensor self, Tensor vec2) -> Tensor", kAll, [](const Call& c) { return at::outer(c.t(0), c.t(1)); });
  r.def("addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor", kFI,
        [](const Call& c) { return at::addmm(c.t(0), c.t(1), c.t(2), c.scalar(3), c.scalar(4)); });
  r.def(
      "baddbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> "
      "Tensor",
      kFI, [](const Call& c) {
        // ATen 1.13's small-matrix path reads its uninitialised output when beta is 0
        // (NaN appears where memory held one); beta 0 means self is ignored, so skip it.
        const at::Scalar beta = c.scalar(3), alpha = c.scalar(4);
        if (beta.equal(0)) {
          at::Tensor out = at::bmm(c.t(1), c.t(2));
          return alpha.equal(1) ? out : out.mul_(alpha);
        }
        return at::baddbmm(c.t(0), c.t(1), c.t(2), beta, alpha);
      });
  r.def("addmv(Tensor self, Tensor mat, Tensor vec, *, Scalar beta=1, Scalar alpha=1) -> Tensor", kFI,
        [](const Call& c) { return at::addmv(c.t(0), c.t(1), c.t(2), c.scalar(3), c.scalar(4)); });
  r.def("einsum(str equation, Tensor[] tensors, *, int[]? path=None) -> Tensor", kFI,
        [](const Call& c) { return at::einsum(c.s(0), c.list(1), c.oints(2)); });
  r.def("tensordot(Tensor self, Tensor other, int[] dims_self, int[] dims_other) -> Tensor", kFI,
        [](const Call& c) { return at::tensordot(c.t(0), c.t(1), c.ints(2), c.ints(3)); });
  r.def(
      "addbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> "
      "Tensor",
      kFI, [](const Call& c) { return at::addbmm(c.t(0), c.t(1), c.t(2), c.scalar(3), c.scalar(4)); });
  r.def("addr(Tensor self, Tensor vec1, Tensor vec2, *, Scalar beta=1, Scalar alpha=1) -> Tensor", kFI,
        [](const Call& c) { return at::addr(c.t(0), c.t(1), c.t(2), c.scalar(3), c.scalar(4)); });
  r.def("inner(Tensor self, Tensor other) -> Tensor", kFI, [](const Call& c) { return at::inner(c.t(0), c.t(1)); });
  r.def("vdot(Tensor self, Tensor other) -> Tensor", kF32_64, [](const Call& c) { return at::vdot(c.t(0), c.t(1)); });
  r.def("kron(Tensor self, Tensor other) -> Tensor", kAll, [](const Call& c) { return at::kron(c.t(0), c.t(1)); });
  r.def("linalg_vecdot(Tensor x, Tensor y, *, int dim=-1) -> Tensor", kF,
        [](const Call& c) { return at::linalg_vecdot(c.t(0), c.t(1), c.i(2)); });
  r.def("linalg_cross(Tensor self, Tensor other, *, int dim=-1) -> Tensor", kFI,
        [](const Call& c) { return at::linalg_cross(c.t(0), c.t(1), c.i(2)); });
  r.def("cross(Tensor self, Tensor other, int? dim=None) -> Tensor", kFI,
        [](const Call& c) { return at::cross(c.t(0), c.t(1), c.oi(2)); });
  r.def("linalg_multi_dot(Tensor[] tensors) -> Tensor", kFI,
        [](const Call& c) { return at::linalg_multi_dot(c.list(0)); });
  r.def("chain_matmul(Tensor[] matrices) -> Tensor", kFI, [](const Call& c) { return at::chain_matmul(c.list(0)); });
  r.def("bilinear(Tensor input1, Tensor input2, Tensor weight, Tensor? bias=None) -> Tensor", kF,
        [](const Call& c) { return at::bilinear(c.t(0), c.t(1), c.t(2), c.ot(3)); });

  // Solvers and decompositions (LAPACK: float32/float64 only).
  r.family("linalg_solve");
  r.def("linalg_det(Tensor A) -> Tensor", kF32_64, [](const Call& c) { return at::linalg_det(c.t(0)); });
  r.def("det(Tensor self) -> Tensor", kF32_64, [](const Call& c) { return at::det(c.t(0)); });
  r.def("logdet(Tensor self) -> Tensor", kF32_64, [](const Call& c) { return at::logdet(c.t(0)); });
  r.def("linalg_slogdet(Tensor A) -> (Tensor sign, Tensor logabsdet)", kF32_64,
        [](const Call& c) { return outs(at::linalg_slogdet(c.t(0))); });
  r.def("slogdet(Tensor self) -> (Tensor sign, Tensor logabsdet)", kF32_64,
        [](const Call& c) { return outs(at::slogdet(c.t(0))); });
  r.def("linalg_inv(Tensor A) -> Tensor", kF32_64, [](const Call& c) { return at::linalg_inv(c.t(0)); });
  r.def("inverse(Tensor self) -> Tensor", kF32_64, [](const Call& c) { return at::inverse(c.t(0)); });
  r.def("linalg_solve(Tensor A, Tensor B, *, bool left=True) -> Tensor", kF32_64,
        [](const Call& c) { return at::linalg_solve(c.t(0), c.t(1), c.b(2)); });
  r.def("linalg_matrix_power(Tensor self, int n) -> Tensor", kF32_64,
        [](const Call& c) { return at::linalg_matrix_power(c.t(0), c.i(1)); });
  r.def("matrix_power(Tensor self, int n) -> Tensor", kF32_64,
        [](const Call& c) { return at::matrix_power(c.t(0), c.i(1)); });
  r.def("linalg_cholesky(Tensor self, *, bool upper=False) -> Tensor", kF32_64,
        [](const Call& c) { return at::linalg_cholesky(c.t(0), c.b(1)); });
  r.def("linalg_pinv(Tensor self, float rcond, bool hermitian=False) -> Tensor", kF32_64,
        [](const Call& c) { return at::linalg_pinv(c.t(0), c.f(1), c.b(2)); });
  r.def("pinverse(Tensor self, float rcond=1e-15) -> Tensor", kF32_64,
        [](const Call& c) { return at::pinverse(c.t(0), c.f(1)); });

  r.family("distance");
  r.def("cdist(Tensor x1, Tensor x2, float p=2, int? compute_mode=None) -> Tensor", kF32_64,
        [](const Call& c) { return at::cdist(c.t(0), c.t(1), c.f(2), c.oi(3)); });
  r.def("pdist(Tensor self, float p=2) -> Tensor", kF32_64, [](const Call& c) { return at::pdist(c.t(0), c.f(1)); });
  r.def(
      "pairwise_distance(Tensor x1, Tensor x2, float p=2, float eps=1e-06, bool keepdim=False) -> "
      "Tensor",
      kF, [](const Call& c) { return at::pairwise_distance(c.t(0), c.t(1), c.f(2), c.f(3), c.b(4)); });

  // Integer convolution exists in ATen 1.13 only without dilation: not claimed.
  r.family("conv");
  r.def(
      "conv1d(Tensor input, Tensor weight, Tensor? bias=None, int[1] stride=[1], "
      "int[1] padding=[0], int[1] dilation=[1], int groups=1) -> Tensor",
      kF, [](const Call& c) { return at::conv1d(c.t(0), c.t(1), c.ot(2), c.ints(3), c.ints(4), c.ints(5), c.i(6)); });
  r.def(
      "conv1d.padding(Tensor input, Tensor weight, Tensor? bias=None, int[1] stride=[1], "
      "str padding=\"valid\", int[1] dilation=[1], int groups=1) -> Tensor",
      kF, [](const Call& c) { return at::conv1d(c.t(0), c.t(1), c.ot(2), c.ints(3), c.s(4), c.ints(5), c.i(6)); });
  r.def(
      "conv2d(Tensor input, Tensor weight, Tensor? bias=None, int[2] stride=1, "
      "int[2] padding=0, int[2] dilation=1, int groups=1) -> Tensor",
      kF, conv2d);
  r.def(
      "conv2d.padding(Tensor input, Tensor weight, Tensor? bias=None, int[2] stride=1, "
      "str padding=\"valid\", int[2] dilation=1, int groups=1) -> Tensor",
      kF, [](const Call& c) { return at::conv2d(c.t(0), c.t(1), c.ot(2), c.ints(3), c.s(4), c.ints(5), c.i(6)); });
  r.def(
      "conv3d(Tensor input, Tensor weight, Tensor? bias=None, int[3] stride=1, "
      "int[3] padding=0, int[3] dilation=1, int groups=1) -> Tensor",
      kF32_64,
      [](const Call& c) { return at::conv3d(c.t(0), c.t(1), c.ot(2), c.ints(3), c.ints(4), c.ints(5), c.i(6)); });
  r.def(
      "conv_transpose1d(Tensor input, Tensor weight, Tensor? bias=None, int[1] stride=[1], "
      "int[1] padding=[0], int[1] output_padding=[0], int groups=1, int[1] dilation=[1]) -> Tensor",
      kF32_64, [](const Call& c) {
        return at::conv_transpose1d(c.t(0), c.t(1), c.ot(2), c.ints(3), c.ints(4), c.ints(5), c.i(6), c.ints(7));
      });
  r.def(
      "conv_transpose2d.input(Tensor input, Tensor weight, Tensor? bias=None, int[2] stride=1, "
      "int[2] padding=0, int[2] output_padding=0, int groups=1, int[2] dilation=1) -> Tensor",
      kF32_64, [](const Call& c) {
        return at::conv_transpose2d(c.t(0), c.t(1), c.ot(2), c.ints(3), c.ints(4), c.ints(5), c.i(6), c.ints(7));
      });
  r.def(
      "conv_transpose3d.input(Tensor input, Tensor weight, Tensor? bias=None, int[3] stride=1, "
      "int[3] padding=0, int[3] output_padding=0, int groups=1, int[3] dilation=1) -> Tensor",
      kF32_64, [](const Call& c) {
        return at::conv_transpose3d(c.t(0), c.t(1), c.ot(2), c.ints(3), c.ints(4), c.ints(5), c.i(6), c.ints(7));
      });
  // conv2d(padding="same") as traced (the op behind F.conv*d with a string padding).
  r.def(
      "_convolution_mode(Tensor input, Tensor weight, Tensor? bias, int[] stride, str padding, "
      "int[] dilation, int groups) -> Tensor",
      kF32_64, [](const Call& c) {
        return at::_convolution_mode(c.t(0), c.t(1), c.ot(2), c.ints(3), c.s(4), c.ints(5), c.i(6));
      });
  r.def("conv_tbc(Tensor self, Tensor weight, Tensor bias, int pad=0) -> Tensor", kF32_64,
        [](const Call& c) { return at::conv_tbc(c.t(0), c.t(1), c.t(2), c.i(3)); });
  r.def(
      "convolution(Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding, "
      "int[] dilation, bool transposed, int[] output_padding, int groups) -> Tensor",
      kF32_64, [](const Call& c) {
        return at::convolution(c.t(0), c.t(1), c.ot(2), c.ints(3), c.ints(4), c.ints(5), c.b(6), c.ints(7), c.i(8));
      });
  // Older traces record _convolution; benchmark/deterministic/cudnn/tf32 flags don't
  // change the result on the CPU.
  r.def(
      "_convolution(Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding, "
      "int[] dilation, bool transposed, int[] output_padding, int groups, bool benchmark=False, "
      "bool deterministic=False, bool cudnn_enabled=True, bool allow_tf32=True) -> Tensor",
      kF32_64, [](const Call& c) {
        return at::convolution(c.t(0), c.t(1), c.ot(2), c.ints(3), c.ints(4), c.ints(5), c.b(6), c.ints(7), c.i(8));
      });

  r.family("attention");
  r.def(
      "scaled_dot_product_attention(Tensor query, Tensor key, Tensor value, "
      "Tensor<bool|main>? attn_mask=None, float dropout_p=0.0, bool is_causal=False, *, "
      "float? scale=None, bool enable_gqa=False) -> Tensor",
      kF, sdpa);
  r.def(
      "_scaled_dot_product_attention(Tensor query, Tensor key, Tensor value, "
      "Tensor<bool|main>? attn_mask=None, float dropout_p=0., bool need_attn_weights=False, "
      "bool is_causal=False) -> (Tensor, Tensor)",
      kF, [](const Call& c) {
        return outs(at::_scaled_dot_product_attention(c.t(0), c.t(1), c.t(2), c.ot(3), c.f(4), c.b(5), c.b(6)));
      });
  // The fused fast paths that nn.MultiheadAttention / nn.TransformerEncoderLayer record
  // when traced in eval mode under no_grad.
  r.def(
      "_native_multi_head_attention(Tensor query, Tensor key, Tensor value, int embed_dim, "
      "int num_head, Tensor qkv_weight, Tensor qkv_bias, Tensor proj_weight, Tensor proj_bias, "
      "Tensor<bool|main>? mask=None, bool need_weights=True, bool average_attn_weights=True, "
      "int? mask_type=None) -> (Tensor, Tensor)",
      kF32_64, [](const Call& c) {
        return outs(at::_native_multi_head_attention(c.t(0), c.t(1), c.t(2), c.i(3), c.i(4), c.t(5), c.t(6), c.t(7),
                                                     c.t(8), c.ot(9), c.b(10), c.b(11), c.oi(12)));
      });
  r.def(
      "_transformer_encoder_layer_fwd(Tensor src, int embed_dim, int num_heads, "
      "Tensor qkv_weight, Tensor qkv_bias, Tensor proj_weight, Tensor proj_bias, bool use_gelu, "
      "bool norm_first, float eps, Tensor norm_weight_1, Tensor norm_bias_1, "
      "Tensor norm_weight_2, Tensor norm_bias_2, Tensor ffn_weight_1, Tensor ffn_bias_1, "
      "Tensor ffn_weight_2, Tensor ffn_bias_2, Tensor<bool|main>? mask=None, int? mask_type=None) -> "
      "Tensor",
      kF32_64, [](const Call& c) {
        return at::_transformer_encoder_layer_fwd(c.t(0), c.i(1), c.i(2), c.t(3), c.t(4), c.t(5), c.t(6), c.b(7),
                                                  c.b(8), c.f(9), c.t(10), c.t(11), c.t(12), c.t(13), c.t(14), c.t(15),
                                                  c.t(16), c.t(17), c.ot(18), c.oi(19));
      });
}

}  // namespace sy_aten
