"""Catalog for tools/ops/list_model_ops.py: torch.nn layers, torch.nn.functional / torch API samples
and sequence models, each as (name, make module, make inputs). Small shapes: only the ops matter."""
import torch
import torch.nn as nn
import torch.nn.functional as F

# ---- the catalogs: (name, make module, make inputs) ------------------------------------------

class Fn(nn.Module):
    """A function as a module, so that it traces like a layer (closure tensors become constants)."""

    def __init__(self, f):
        super().__init__()
        self.f = f

    def forward(self, *xs):
        return self.f(*xs)


def _inputs(specs):
    return tuple(s() if callable(s) else torch.randn(*s) for s in specs)


def fx(name, f, *specs):
    return (name, lambda: Fn(f), lambda: _inputs(specs))


def layer(name, make, *specs):
    return (name, make, lambda: _inputs(specs))


def ri(hi, *shape):
    return lambda: torch.randint(0, hi, shape)


def rb(*shape):
    return lambda: torch.rand(*shape) > 0.5


def rp(*shape):  # positive
    return lambda: torch.rand(*shape) + 0.1


X, V, X3, M = (2, 4, 8, 8), (2, 4, 16), (1, 2, 4, 6, 6), (5, 5)

ACTIVATIONS = ("relu relu6 elu selu celu leaky_relu glu gelu logsigmoid hardshrink tanhshrink "
               "softsign softplus softshrink tanh sigmoid hardsigmoid silu mish hardswish hardtanh")
UNARY = ("abs exp exp2 log log2 log10 log1p expm1 sqrt rsqrt sin cos tan asin acos atan sinh cosh "
         "asinh atanh erf erfc erfinv lgamma digamma sign sgn frac floor ceil round trunc neg "
         "reciprocal square sigmoid logit isnan isinf isfinite signbit angle positive")
BINARY = ("add sub mul div floor_divide remainder fmod pow atan2 hypot logaddexp logaddexp2 xlogy "
          "maximum minimum fmax fmin copysign nextafter true_divide eq ne lt le gt ge "
          "logical_and logical_or logical_xor isclose dist")
REDUCTIONS = ("sum mean prod nansum nanmean amax amin max min argmax argmin std var std_mean "
              "var_mean all any count_nonzero median nanmedian aminmax")


def functional_entries():
    w4, b4 = torch.randn(6, 4, 3, 3), torch.randn(6)
    e = [fx(n, getattr(F, n), X) for n in ACTIVATIONS.split()]
    e += [fx("gelu_tanh", lambda x: F.gelu(x, approximate="tanh"), X),
          fx("rrelu_eval", lambda x: F.rrelu(x, training=False), X),
          fx("threshold", lambda x: F.threshold(x, 0.1, 20.0), X),
          fx("softmax", lambda x: F.softmax(x, 1), X), fx("softmin", lambda x: F.softmin(x, 1), X),
          fx("log_softmax", lambda x: F.log_softmax(x, -1), X),
          fx("prelu", lambda x, c0=torch.full((4,), 0.2): F.prelu(x, c0), X),
          fx("relu_inplace", lambda x: F.relu(x * 2, inplace=True), X),
          fx("hardtanh_inplace", lambda x: F.hardtanh(x * 2, inplace=True), X),
          fx("leaky_relu_inplace", lambda x: F.leaky_relu(x * 2, inplace=True), X),
          fx("elu_inplace", lambda x: F.elu(x * 2, inplace=True), X),
          fx("silu_inplace", lambda x: F.silu(x * 2, inplace=True), X),
          fx("hardswish_inplace", lambda x: F.hardswish(x * 2, inplace=True), X)]
    # norms
    e += [fx("batch_norm", lambda x, c0=torch.zeros(4), c1=torch.ones(4), c2=torch.randn(4), c3=torch.randn(4): F.batch_norm(x, c0, c1, c2, c3), X),
          fx("instance_norm", lambda x: F.instance_norm(x), X),
          fx("layer_norm", lambda x: F.layer_norm(x, [8]), X),
          fx("group_norm", lambda x: F.group_norm(x, 2), X),
          fx("local_response_norm", lambda x: F.local_response_norm(x, 2), X),
          fx("normalize", lambda x: F.normalize(x, dim=1), X),
          fx("torch.norm", lambda x: (torch.norm(x), torch.norm(x, dim=1), torch.norm(x, p=1, dim=(2, 3))), X),
          fx("torch.norm_matrix", lambda m: (torch.norm(m, p="fro"), torch.norm(m, p="nuc")), M),
          fx("linalg.norm", lambda x, m: (torch.linalg.norm(x), torch.linalg.norm(x, dim=1),
                                          torch.linalg.norm(m, ord="fro"), torch.linalg.norm(m, ord=float("inf"))), X, M),
          fx("linalg.vector_norm", lambda x: torch.linalg.vector_norm(x, 3, dim=(1, 2)), X),
          fx("linalg.matrix_norm", lambda m: (torch.linalg.matrix_norm(m), torch.linalg.matrix_norm(m, ord=1)), M),
          fx("renorm", lambda x: torch.renorm(x, 2, 0, 1.0), X)]
    # pooling
    e += [fx("avg_pool1d", lambda x: F.avg_pool1d(x, 3, 2, 1), V),
          fx("avg_pool2d", lambda x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False), X),
          fx("avg_pool3d", lambda x: F.avg_pool3d(x, 2), X3),
          fx("max_pool1d", lambda x: F.max_pool1d(x, 3, 2), V),
          fx("max_pool2d", lambda x: F.max_pool2d(x, 3, 2, 1), X),
          fx("max_pool2d_indices", lambda x: F.max_pool2d(x, 2, return_indices=True), X),
          fx("max_pool3d", lambda x: F.max_pool3d(x, 2), X3),
          fx("max_unpool2d", lambda x: F.max_unpool2d(*F.max_pool2d(x, 2, return_indices=True), 2), X),
          fx("lp_pool1d", lambda x: F.lp_pool1d(x, 2, 3), V),
          fx("lp_pool2d", lambda x: F.lp_pool2d(x, 2, 2), X),
          fx("adaptive_avg_pool1d", lambda x: F.adaptive_avg_pool1d(x, 5), V),
          fx("adaptive_avg_pool2d", lambda x: F.adaptive_avg_pool2d(x, (3, 5)), X),
          fx("adaptive_avg_pool3d", lambda x: F.adaptive_avg_pool3d(x, 2), X3),
          fx("adaptive_max_pool1d", lambda x: F.adaptive_max_pool1d(x, 5), V),
          fx("adaptive_max_pool2d", lambda x: F.adaptive_max_pool2d(x, (3, 5)), X),
          fx("adaptive_max_pool3d", lambda x: F.adaptive_max_pool3d(x, 2), X3),
          fx("fractional_max_pool2d", lambda x, s: F.fractional_max_pool2d(x, 2, output_size=4, _random_samples=s),
             X, lambda: torch.rand(2, 4, 2)),
          fx("fractional_max_pool3d", lambda x, s: F.fractional_max_pool3d(x, 2, output_size=2, _random_samples=s),
             X3, lambda: torch.rand(1, 2, 3))]
    # resampling
    e += [fx("interpolate_" + mode + ("_ac" if ac else ""),
             lambda x, mode=mode, ac=ac: F.interpolate(x, scale_factor=2, mode=mode, align_corners=ac), shape)
          for mode, shape, acs in (("nearest", X, [None]), ("linear", V, [False, True]),
                                   ("bilinear", X, [False, True]), ("bicubic", X, [False, True]),
                                   ("trilinear", X3, [False]), ("nearest-exact", X, [None]),
                                   ("area", X, [None])) for ac in acs]
    e += [fx("interpolate_size", lambda x: F.interpolate(x, size=(5, 11), mode="bilinear"), X),
          fx("interpolate_nearest_1d_3d", lambda v, x3: (F.interpolate(v, scale_factor=2), F.interpolate(x3, size=(3, 7, 7))), V, X3),
          fx("affine_grid", lambda t: F.affine_grid(t, [2, 4, 5, 7], align_corners=False), (2, 2, 3))]
    e += [fx("grid_sample_%s_%s" % (m, p), lambda x, g, m=m, p=p: F.grid_sample(x, g, mode=m, padding_mode=p, align_corners=False),
             X, lambda: torch.rand(2, 5, 6, 2) * 2.4 - 1.2)
          for m in ("bilinear", "nearest", "bicubic") for p in ("zeros", "border", "reflection")]
    # indexing
    idx = ri(4, 2, 4, 8, 8)
    e += [fx("gather", lambda x, i: torch.gather(x, 1, i), X, idx),
          fx("scatter", lambda x, i: (x.scatter(1, i, x * 2), x.scatter(1, i, 1.5)), X, idx),
          fx("scatter_add", lambda x, i: x.scatter_add(1, i, x), X, idx),
          fx("scatter_reduce", lambda x, i: (x.scatter_reduce(1, i, x, "sum"), x.scatter_reduce(1, i, x, "amax")), X, idx),
          fx("index_select", lambda x, i: torch.index_select(x, 1, i), X, ri(4, 6)),
          fx("index_add", lambda x, i, s: x.index_add(1, i, s), X, ri(4, 3), (2, 3, 8, 8)),
          fx("index_copy", lambda x, s: x.index_copy(1, torch.tensor([2, 0]), s), X, (2, 2, 8, 8)),
          fx("index_fill", lambda x: x.index_fill(1, torch.tensor([1, 3]), -1.0), X),
          fx("masked_fill", lambda x, m: (x.masked_fill(m, -1e4), x.masked_fill(m, torch.tensor(2.0))), X, rb(2, 4, 8, 8)),
          fx("masked_select", lambda x, m: torch.masked_select(x, m), X, rb(2, 4, 8, 8)),
          fx("take", lambda x, i: torch.take(x, i), X, ri(500, 7)),
          fx("take_along_dim", lambda x, i: torch.take_along_dim(x, i, dim=1), X, idx),
          fx("where", lambda c, x, y: (torch.where(c, x, y), torch.where(c, x, 0.0)), rb(2, 4, 8, 8), X, X),
          fx("nonzero", lambda m: (torch.nonzero(m), torch.argwhere(m)), rb(3, 4)),
          fx("index_tensor", lambda x, i, m: (x[i], x[:, i], x[m]), X, ri(2, 3), rb(2, 4, 8, 8)),
          fx("getitem_slices", lambda x: (x[:, 1:3], x[..., None], x[:, 0], x[:, :, ::2]), X),
          fx("split_chunk", lambda x: (x.split(2, 1), x.chunk(3, 2), x.tensor_split(3, 2), x.unbind(1)), X)]
    # sorting, cumulative
    e += [fx("topk", lambda x: torch.topk(x, 3, dim=1), V), fx("sort", lambda x: torch.sort(x, descending=True), V),
          fx("argsort", lambda x: torch.argsort(x, dim=1), V), fx("kthvalue", lambda x: torch.kthvalue(x, 2), V),
          fx("msort", lambda x: torch.msort(x), V), fx("median_dim", lambda x: torch.median(x, 1), V),
          fx("mode", lambda x: torch.mode(x, 1), ri(4, 3, 9)), fx("unique", lambda x: torch.unique(x), ri(6, 20)),
          fx("searchsorted", lambda s, v: torch.searchsorted(s, v), lambda: torch.sort(torch.randn(2, 9))[0], (2, 5)),
          fx("bucketize", lambda v: torch.bucketize(v, torch.tensor([-1.0, 0.0, 1.0])), V),
          fx("cumsum", lambda x: torch.cumsum(x, 1), V), fx("cumprod", lambda x: torch.cumprod(x, 1), V),
          fx("cummax_cummin", lambda x: (torch.cummax(x, 1), torch.cummin(x, 1)), V),
          fx("logcumsumexp", lambda x: torch.logcumsumexp(x, 1), V)]
    # shuffles, rolls, one-hot, comparisons, clamping
    e += [fx("einsum", lambda a, b: torch.einsum("bij,bjk->bik", a, b), (2, 3, 4), (2, 4, 5)),
          fx("roll", lambda x: (torch.roll(x, 2, 1), torch.roll(x, (1, -2), (2, 3)), torch.roll(x, 3)), X),
          fx("rot90_flip", lambda x: (torch.rot90(x, 1, (2, 3)), torch.flip(x, (1,)), torch.fliplr(x)), X),
          fx("pixel_shuffle", lambda x: F.pixel_shuffle(x, 2), X), fx("pixel_unshuffle", lambda x: F.pixel_unshuffle(x, 2), X),
          fx("channel_shuffle", lambda x: F.channel_shuffle(x, 2), X),
          fx("one_hot", lambda i: F.one_hot(i, 5), ri(5, 2, 7)),
          fx("compare_scalar", lambda x: (x > 0, x >= 0.5, x < 0, x <= 0, x == 1.0, x != 0), X),
          fx("clamp", lambda x, lo: (torch.clamp(x, -0.5, 0.5), torch.clamp(x, min=lo), x.clamp_min(0), x.clamp_max(1), torch.clip(x, 0, 1)), X, X),
          fx("isin", lambda x: torch.isin(x, torch.tensor([1, 3])), ri(5, 2, 7))]
    # losses people run at inference (scores, distillation, evaluation)
    tgt = ri(4, 2)
    e += [fx("mse_loss", lambda a, b: F.mse_loss(a, b), V, V), fx("l1_loss", lambda a, b: F.l1_loss(a, b), V, V),
          fx("smooth_l1_loss", lambda a, b: F.smooth_l1_loss(a, b), V, V), fx("huber_loss", lambda a, b: F.huber_loss(a, b), V, V),
          fx("cross_entropy", lambda x, t: (F.cross_entropy(x, t), F.cross_entropy(x, t, label_smoothing=0.1)), (2, 4), tgt),
          fx("cross_entropy_probs", lambda x, p: F.cross_entropy(x, p.softmax(1)), (2, 4), (2, 4)),
          fx("nll_loss", lambda x, t: F.nll_loss(F.log_softmax(x, 1), t), (2, 4), tgt),
          fx("nll_loss2d", lambda x, t: F.nll_loss(x, t), X, ri(4, 2, 8, 8)),
          fx("binary_cross_entropy", lambda x, t: F.binary_cross_entropy(torch.sigmoid(x), t), V, rp(2, 4, 16)),
          fx("bce_with_logits", lambda x, t, c0=torch.ones(16): F.binary_cross_entropy_with_logits(x, t, pos_weight=c0), V, rp(2, 4, 16)),
          fx("kl_div", lambda a, b: F.kl_div(F.log_softmax(a, 1), F.softmax(b, 1), reduction="batchmean"), V, V),
          fx("cosine_embedding_loss", lambda a, b, y: F.cosine_embedding_loss(a, b, y), (3, 8), (3, 8), lambda: torch.tensor([1.0, -1.0, 1.0])),
          fx("margin_ranking_loss", lambda a, b, c0=torch.ones(8): F.margin_ranking_loss(a, b, c0), (8,), (8,)),
          fx("triplet_margin_loss", lambda a, p, n: F.triplet_margin_loss(a, p, n), (3, 8), (3, 8), (3, 8)),
          fx("hinge_embedding_loss", lambda a, c0=torch.ones(3, 8): F.hinge_embedding_loss(a, c0), (3, 8)),
          fx("soft_margin_loss", lambda a, c0=torch.ones(3, 8): F.soft_margin_loss(a, c0), (3, 8)),
          fx("multilabel_soft_margin_loss", lambda a, t: F.multilabel_soft_margin_loss(a, t), (3, 8), rp(3, 8)),
          fx("multi_margin_loss", lambda a, t: F.multi_margin_loss(a, t), (2, 4), tgt),
          fx("poisson_nll_loss", lambda a, t: F.poisson_nll_loss(a, t), V, rp(2, 4, 16)),
          fx("gaussian_nll_loss", lambda a, t, v: F.gaussian_nll_loss(a, t, v), V, V, rp(2, 4, 16))]
    # padding, folding, distances
    e += [fx("pad_%s_%dd" % (mode, d), lambda x, mode=mode, d=d: F.pad(x, [1, 2] * d, mode=mode), shape)
          for mode in ("constant", "reflect", "replicate", "circular") for d, shape in ((1, V), (2, X), (3, X3))]
    e += [fx("pad_value", lambda x: F.pad(x, [1, 1, 2, 0], value=-1.0), X),
          fx("unfold", lambda x: F.unfold(x, 3, padding=1, stride=2), X),
          fx("fold", lambda x: F.fold(x, (6, 6), 3, padding=1), (2, 36, 36)),
          fx("tensor_unfold", lambda x: x.unfold(2, 3, 2), X),
          fx("cdist", lambda a, b: (torch.cdist(a, b), torch.cdist(a, b, p=1)), (2, 5, 3), (2, 6, 3)),
          fx("pdist", lambda a: F.pdist(a), (5, 3)),
          fx("cosine_similarity", lambda a, b: F.cosine_similarity(a, b, dim=1), X, X),
          fx("pairwise_distance", lambda a, b: F.pairwise_distance(a, b), (3, 8), (3, 8))]
    # layers as functions
    e += [fx("linear", lambda x, c0=torch.randn(5, 16), c1=torch.randn(5): F.linear(x, c0, c1), V),
          fx("bilinear", lambda a, b, c0=torch.randn(5, 3, 4), c1=torch.randn(5): F.bilinear(a, b, c0, c1), (2, 3), (2, 4)),
          fx("conv1d", lambda x, c0=torch.randn(6, 4, 3): F.conv1d(x, c0, padding=1), V),
          fx("conv2d", lambda x: F.conv2d(x, w4, b4, stride=2, padding=1), X),
          fx("conv2d_same_dilated_grouped", lambda x, c0=torch.randn(4, 2, 3, 3): F.conv2d(x, c0, padding="same", dilation=2, groups=2), X),
          fx("conv3d", lambda x, c0=torch.randn(3, 2, 3, 3, 3): F.conv3d(x, c0, padding=1), X3),
          fx("conv_transpose1d", lambda x, c0=torch.randn(4, 3, 3): F.conv_transpose1d(x, c0, stride=2), V),
          fx("conv_transpose2d", lambda x, c0=torch.randn(4, 3, 3, 3): F.conv_transpose2d(x, c0, stride=2, output_padding=1), X),
          fx("conv_transpose3d", lambda x, c0=torch.randn(2, 3, 2, 2, 2): F.conv_transpose3d(x, c0, stride=2), X3),
          fx("embedding", lambda i, c0=torch.randn(10, 6): F.embedding(i, c0, padding_idx=0), ri(10, 2, 5)),
          fx("embedding_bag", lambda i, o, c0=torch.randn(10, 6): (F.embedding_bag(i, c0, o, mode="mean"),
                                            F.embedding_bag(i, c0, o, mode="max")),
             ri(10, 8), lambda: torch.tensor([0, 3, 5]))]
    # element-wise math and reductions
    e += [fx("math_" + n, getattr(torch, n), rp(2, 3, 4) if n in ("acosh", "log", "sqrt") else (2, 3, 4)) for n in UNARY.split()]
    e += [fx("math_acosh", lambda x: torch.acosh(x + 1), rp(2, 3, 4)),
          fx("round_decimals", lambda x: torch.round(x, decimals=2), (2, 3, 4)),
          fx("div_modes", lambda a, b: (torch.div(a, b, rounding_mode="floor"), torch.div(a, b, rounding_mode="trunc"), a / 2), V, V),
          fx("pow_scalar", lambda x: (x ** 2, 2 ** x, x ** 0.5, torch.pow(x, 3)), rp(2, 3)),
          fx("int_ops", lambda a, b: (a & b, a | b, a ^ b, ~a, a << 1, b >> 1, a // 3, a % 3), ri(9, 2, 5), ri(9, 2, 5)),
          fx("lerp_addc", lambda a, b, c: (torch.lerp(a, b, 0.3), torch.addcmul(a, b, c, value=0.5), torch.addcdiv(a, b, c.abs() + 1)), V, V, V),
          fx("heaviside", lambda a: torch.heaviside(a, torch.tensor(0.5)), V),
          fx("nan_to_num", lambda x: torch.nan_to_num(x.log()), V)]
    e += [fx("binary_" + n, getattr(torch, n), V, V) for n in BINARY.split()]
    e += [fx("reduce_" + n, lambda x, n=n: getattr(torch, n)(x), V) for n in REDUCTIONS.split()]
    e += [fx("reduce_dims", lambda x: (x.sum((1, 2), keepdim=True), x.mean(-1), x.prod(1), x.amax((0, 2)), x.max(1),
                                       x.min(2), x.argmax(-1), x.std(1), x.var(1, unbiased=False), x.logsumexp(1),
                                       (x > 0).all(1), (x > 0).any(-1), x.median(1), torch.quantile(x, 0.3, dim=1)), V),
          fx("sum_dtype", lambda i: (i.sum(), i.sum(1, dtype=torch.float32)), ri(9, 3, 4))]
    # creation, joins, views, casts
    e += [fx("like", lambda x: (torch.zeros_like(x), torch.ones_like(x), torch.full_like(x, 3.0), torch.empty_like(x).fill_(1.0)), V),
          fx("ranges", lambda x: x + torch.arange(16) + torch.linspace(0, 1, 16) + torch.logspace(0, 1, 16) + torch.arange(0, 32, 2), V),
          fx("eye_full", lambda x: x @ torch.eye(16) + torch.full((16,), 2.0) + torch.zeros(16) + torch.ones(16), V),
          fx("tri_diag", lambda m: (m.tril(), m.triu(1), torch.diag(m), torch.diagonal(m), torch.diag_embed(m), torch.trace(m), m.diag()), M),
          fx("products", lambda a, b: (torch.outer(a, b), torch.kron(a, b), torch.cartesian_prod(a, b), torch.dot(a, b), torch.inner(a, b)), (4,), (4,)),
          fx("cross", lambda a, b: torch.linalg.cross(a, b), (4, 3), (4, 3)),
          fx("meshgrid", lambda a, b: torch.meshgrid(a, b, indexing="ij"), (4,), (3,)),
          fx("broadcast_tensors", lambda a, b: torch.broadcast_tensors(a, b), (4, 1), (3,)),
          fx("block_diag", lambda a, b: torch.block_diag(a, b), (2, 2), (3, 1)),
          fx("joins", lambda a, b: (torch.cat([a, b], 1), torch.stack([a, b]), torch.hstack([a, b]), torch.vstack([a, b]),
                                    torch.dstack([a, b]), torch.column_stack([a, b])), V, V),
          fx("views", lambda x: (x.view(2, -1), x.reshape(4, 32), x.permute(2, 0, 1), x.transpose(0, 1), x.t() if x.dim() == 2 else x.mT,
                                 x.flatten(1), x.unflatten(2, (4, 4)), x.squeeze(), x.unsqueeze(0), x[:1].expand(3, 4, 16),
                                 x.repeat(1, 2, 1), x.tile((2,)), x.repeat_interleave(2, dim=1), x.movedim(0, 2), x.swapaxes(1, 2),
                                 x.narrow(2, 1, 3), x.contiguous(), x.clone(), x.view_as(x), x.expand_as(x), x.reshape_as(x)), V),
          fx("repeat_interleave_tensor", lambda x: x.repeat_interleave(torch.tensor([1, 2, 0, 3]), dim=1), V),
          fx("casts", lambda x: (x.float(), x.long(), x.half(), x.bool(), x.to(torch.int32), x.type_as(torch.ones(1, dtype=torch.float64)),
                                 x.double(), x.bfloat16()), V)]
    # linear algebra
    e += [fx("matmuls", lambda a, b, c: (a @ b, torch.mm(a[0], b[0]), torch.bmm(a, b), torch.baddbmm(c, a, b), torch.addmm(c[0], a[0], b[0]),
                                         torch.addbmm(c[0], a, b), torch.mv(a[0], b[0, :, 0]), torch.addmv(c[0, :, 0], a[0], b[0, :, 0]),
                                         torch.addr(c[0], a[0, :, 0], b[0, 0])), (2, 4, 4), (2, 4, 4), (2, 4, 4)),
          fx("linalg_solvers", lambda m: (torch.linalg.det(m), torch.linalg.inv(m), torch.linalg.solve(m, m[:, :1]),
                                          torch.linalg.matrix_power(m, 3), torch.linalg.slogdet(m)),
             lambda: torch.randn(5, 5) + 5 * torch.eye(5))]
    # what the importer emits when it makes in-place writes through views functional
    e += [fx("slice_scatter", lambda x, s: torch.slice_scatter(x, s, 1, 0, 4, 2), X, (2, 2, 8, 8)),
          fx("select_scatter", lambda x, s: torch.select_scatter(x, s, 1, 2), X, (2, 8, 8)),
          fx("diagonal_scatter", lambda m, d: torch.diagonal_scatter(m, d, 1), M, (4,)),
          fx("index_put", lambda x, i, v: (torch.index_put(x, (i,), v), torch.index_put(x, (i,), v, accumulate=True)),
             (6, 3), ri(6, 4), (4, 3)),
          fx("masked_scatter", lambda x, m, s: x.masked_scatter(m, s), X, rb(2, 4, 8, 8), X),
          fx("inplace_through_views", lambda x: _write_through_views(x), X)]
    return e


def _write_through_views(x):
    y = x.clone()
    y[:, 0] = 0.0                    # select + fill_
    y[:, 1:3].mul_(2.0)              # slice + mul_
    y[y > 1] = 1.0                   # index_put_ with a mask
    y.narrow(3, 0, 2).copy_(x[..., :2] + 1)
    return y


def nn_entries():
    L = layer
    return [
        L("Linear", lambda: nn.Linear(16, 5), V), L("Bilinear", lambda: nn.Bilinear(3, 4, 5), (2, 3), (2, 4)),
        L("Identity_Flatten_Unflatten", lambda: nn.Sequential(nn.Identity(), nn.Flatten(), nn.Unflatten(1, (4, 64))), X),
        L("Conv1d", lambda: nn.Conv1d(4, 6, 3, padding=1), V), L("Conv2d", lambda: nn.Conv2d(4, 6, 3, stride=2, padding=1), X),
        L("Conv2d_reflect", lambda: nn.Conv2d(4, 6, 3, padding=1, padding_mode="reflect"), X),
        L("Conv2d_circular", lambda: nn.Conv2d(4, 6, 3, padding=1, padding_mode="circular"), X),
        L("Conv3d", lambda: nn.Conv3d(2, 3, 3, padding=1), X3),
        L("ConvTranspose1d", lambda: nn.ConvTranspose1d(4, 3, 3, stride=2), V),
        L("ConvTranspose2d", lambda: nn.ConvTranspose2d(4, 3, 3, stride=2, output_padding=1), X),
        L("ConvTranspose3d", lambda: nn.ConvTranspose3d(2, 3, 2, stride=2), X3),
        L("BatchNorm1d", lambda: nn.BatchNorm1d(4), V), L("BatchNorm2d", lambda: nn.BatchNorm2d(4), X),
        L("BatchNorm3d", lambda: nn.BatchNorm3d(2), X3),
        L("InstanceNorm2d", lambda: nn.InstanceNorm2d(4, affine=True), X),
        L("InstanceNorm1d_running", lambda: nn.InstanceNorm1d(4, track_running_stats=True), V),
        L("LayerNorm", lambda: nn.LayerNorm([8, 8]), X), L("GroupNorm", lambda: nn.GroupNorm(2, 4), X),
        L("LocalResponseNorm", lambda: nn.LocalResponseNorm(3), X), L("CrossMapLRN2d", lambda: nn.CrossMapLRN2d(3), X),
        L("MaxPool2d", lambda: nn.MaxPool2d(3, 2, 1, ceil_mode=True), X), L("MaxPool1d", lambda: nn.MaxPool1d(2), V),
        L("MaxPool3d", lambda: nn.MaxPool3d(2), X3), L("AvgPool2d", lambda: nn.AvgPool2d(2), X),
        L("AvgPool1d", lambda: nn.AvgPool1d(2), V), L("AvgPool3d", lambda: nn.AvgPool3d(2), X3),
        L("LPPool2d", lambda: nn.LPPool2d(2, 2), X), L("LPPool1d", lambda: nn.LPPool1d(2, 2), V),
        L("AdaptiveAvgPool2d", lambda: nn.AdaptiveAvgPool2d(1), X), L("AdaptiveAvgPool1d", lambda: nn.AdaptiveAvgPool1d(3), V),
        L("AdaptiveAvgPool3d", lambda: nn.AdaptiveAvgPool3d(1), X3), L("AdaptiveMaxPool2d", lambda: nn.AdaptiveMaxPool2d(3), X),
        L("AdaptiveMaxPool1d", lambda: nn.AdaptiveMaxPool1d(3), V), L("AdaptiveMaxPool3d", lambda: nn.AdaptiveMaxPool3d(2), X3),
        L("MaxUnpool2d", lambda: _Unpool(), X),
        L("Upsample_nearest", lambda: nn.Upsample(scale_factor=2), X),
        L("Upsample_bilinear", lambda: nn.Upsample(scale_factor=2, mode="bilinear"), X),
        L("UpsamplingBilinear2d", lambda: nn.UpsamplingBilinear2d(scale_factor=2), X),
        L("UpsamplingNearest2d", lambda: nn.UpsamplingNearest2d(size=(5, 5)), X),
        L("PixelShuffle_Unshuffle", lambda: nn.Sequential(nn.PixelShuffle(2), nn.PixelUnshuffle(2)), X),
        L("ChannelShuffle", lambda: nn.ChannelShuffle(2), X),
        L("ZeroPad2d", lambda: nn.ZeroPad2d(1), X), L("ConstantPad1d", lambda: nn.ConstantPad1d(2, 0.5), V),
        L("ConstantPad3d", lambda: nn.ConstantPad3d(1, 0.5), X3),
        L("ReflectionPad1d", lambda: nn.ReflectionPad1d(2), V), L("ReflectionPad2d", lambda: nn.ReflectionPad2d(2), X),
        L("ReflectionPad3d", lambda: nn.ReflectionPad3d(1), X3),
        L("ReplicationPad1d", lambda: nn.ReplicationPad1d(2), V), L("ReplicationPad2d", lambda: nn.ReplicationPad2d(2), X),
        L("ReplicationPad3d", lambda: nn.ReplicationPad3d(1), X3),
        L("Embedding", lambda: nn.Embedding(10, 6, padding_idx=0), ri(10, 2, 5)),
        L("EmbeddingBag", lambda: nn.EmbeddingBag(10, 6), ri(10, 2, 5)),
        L("Dropouts_eval", lambda: nn.Sequential(nn.Dropout(), nn.Dropout2d(), nn.AlphaDropout(), nn.FeatureAlphaDropout()), X),
        L("Fold_Unfold", lambda: nn.Sequential(nn.Unfold(2, stride=2), nn.Fold((8, 8), 2, stride=2)), X),
        L("CosineSimilarity", lambda: _Pair(nn.CosineSimilarity()), X),
        L("PairwiseDistance", lambda: _Pair(nn.PairwiseDistance()), (3, 8)),
        L("Softmax2d", lambda: nn.Softmax2d(), X),
        L("AdaptiveLogSoftmaxWithLoss_predict", lambda: _AdaptivePredict(), (3, 16)),
    ] + [L(n, getattr(nn, n), X) for n in (
        "ReLU ReLU6 ELU SELU CELU LeakyReLU GELU LogSigmoid Hardshrink Tanhshrink Softsign Softplus "
        "Softshrink Tanh Sigmoid Hardsigmoid SiLU Mish Hardswish Hardtanh PReLU RReLU Softmin "
        "Softmax LogSoftmax GLU").split()] + [L("Threshold", lambda: nn.Threshold(0.1, 20.0), X)]


class _Pair(nn.Module):
    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, x):
        return self.m(x, x.flip(0))


class _Unpool(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool, self.unpool = nn.MaxPool2d(2, return_indices=True), nn.MaxUnpool2d(2)

    def forward(self, x):
        return self.unpool(*self.pool(x))


class _AdaptivePredict(nn.Module):
    def __init__(self):
        super().__init__()
        self.m = nn.AdaptiveLogSoftmaxWithLoss(16, 10, [4, 8])

    def forward(self, x):
        return self.m.log_prob(x)


# ---- sequence models, written the way users write them ---------------------------------------

class _Rnn(nn.Module):
    """An RNN layer, optionally with an initial state built from the batch size."""

    def __init__(self, rnn, with_state):
        super().__init__()
        self.rnn, self.with_state = rnn, with_state

    def forward(self, x):
        if not self.with_state:
            return self.rnn(x)
        dirs = 2 if self.rnn.bidirectional else 1
        b = x.size(0 if self.rnn.batch_first else 1)
        h = torch.zeros(self.rnn.num_layers * dirs, b, self.rnn.hidden_size)
        if isinstance(self.rnn, nn.LSTM):
            return self.rnn(x, (h, torch.ones_like(h)))
        return self.rnn(x, h + 0.5)


class _Cell(nn.Module):
    def __init__(self, cell):
        super().__init__()
        self.cell = cell

    def forward(self, x):
        h = None
        for t in range(x.size(0)):
            h = self.cell(x[t], h)
        return h


class HfBertBlock(nn.Module):
    """A BERT layer as Hugging Face writes it: token types, additive mask, explicit heads."""

    def __init__(self, d=32, heads=4, vocab=50):
        super().__init__()
        self.h, self.dh = heads, d // heads
        self.word, self.pos, self.tok_type = nn.Embedding(vocab, d), nn.Embedding(64, d), nn.Embedding(2, d)
        self.ln0, self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d), nn.LayerNorm(d)
        self.q, self.k, self.v, self.o = (nn.Linear(d, d) for _ in range(4))
        self.up, self.down = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def heads(self, x):
        b, t, _ = x.size()
        return x.view(b, t, self.h, self.dh).permute(0, 2, 1, 3)

    def forward(self, ids, mask):
        pos = torch.arange(ids.size(1), dtype=torch.long).unsqueeze(0).expand_as(ids)
        x = self.ln0(self.word(ids) + self.pos(pos) + self.tok_type(torch.zeros_like(ids)))
        ext = (1.0 - mask[:, None, None, :].to(x.dtype)) * torch.finfo(x.dtype).min
        s = torch.matmul(self.heads(self.q(x)), self.heads(self.k(x)).transpose(-1, -2)) / (self.dh ** 0.5)
        a = torch.matmul(nn.functional.softmax(s + ext, dim=-1), self.heads(self.v(x)))
        a = a.permute(0, 2, 1, 3).contiguous().view(x.size())
        x = self.ln1(x + self.o(a))
        return self.ln2(x + self.down(F.gelu(self.up(x))))


class LlamaBlock(nn.Module):
    """A Llama decoder layer: RMSNorm, rotary embeddings, grouped-query attention, SwiGLU."""

    def __init__(self, d=32, heads=4, kv_heads=2, vocab=50):
        super().__init__()
        self.h, self.kv, self.dh = heads, kv_heads, d // heads
        self.emb = nn.Embedding(vocab, d)
        self.wq, self.wk = nn.Linear(d, d, bias=False), nn.Linear(d, kv_heads * self.dh, bias=False)
        self.wv, self.wo = nn.Linear(d, kv_heads * self.dh, bias=False), nn.Linear(d, d, bias=False)
        self.gate, self.up, self.down = nn.Linear(d, 64, bias=False), nn.Linear(d, 64, bias=False), nn.Linear(64, d, bias=False)
        self.n1, self.n2 = nn.Parameter(torch.ones(d)), nn.Parameter(torch.ones(d))
        self.register_buffer("inv_freq", 1.0 / (10000 ** (torch.arange(0, self.dh, 2).float() / self.dh)))

    @staticmethod
    def rms(x, w):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w

    @staticmethod
    def rotate_half(x):
        x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
        return torch.cat((-x2, x1), dim=-1)

    def forward(self, ids):
        b, t = ids.shape
        x = self.emb(ids)
        freqs = torch.outer(torch.arange(t, dtype=torch.float32), self.inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        cos, sin = emb.cos()[None, None], emb.sin()[None, None]
        h = self.rms(x, self.n1)
        q = self.wq(h).view(b, t, self.h, self.dh).transpose(1, 2)
        k = self.wk(h).view(b, t, self.kv, self.dh).transpose(1, 2)
        v = self.wv(h).view(b, t, self.kv, self.dh).transpose(1, 2)
        q, k = q * cos + self.rotate_half(q) * sin, k * cos + self.rotate_half(k) * sin
        k = k.repeat_interleave(self.h // self.kv, dim=1)
        v = v[:, :, None].expand(b, self.kv, self.h // self.kv, t, self.dh).reshape(b, self.h, t, self.dh)
        s = q @ k.transpose(2, 3) / self.dh ** 0.5
        s = s + torch.full((t, t), float("-inf")).triu(1)
        a = (F.softmax(s.float(), dim=-1).type_as(q) @ v).transpose(1, 2).reshape(b, t, -1)
        x = x + self.wo(a)
        h = self.rms(x, self.n2)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


class _Mha(nn.Module):
    def __init__(self, batch_first, masked):
        super().__init__()
        self.m, self.masked = nn.MultiheadAttention(16, 4, batch_first=batch_first), masked

    def forward(self, x):
        if self.masked:
            t = x.size(1 if self.m.batch_first else 0)
            mask = torch.ones(t, t, dtype=torch.bool).triu(1)
            return self.m(x, x, x, attn_mask=mask)[0]
        return self.m(x, x, x, need_weights=False)[0]


class _Seq2Seq(nn.Module):
    def __init__(self):
        super().__init__()
        self.t = nn.Transformer(16, 4, 1, 1, 32, batch_first=True)

    def forward(self, src, tgt):
        return self.t(src, tgt, tgt_mask=self.t.generate_square_subsequent_mask(tgt.size(1)))


class _Encoder(nn.Module):
    def __init__(self, norm_first):
        super().__init__()
        layer = nn.TransformerEncoderLayer(16, 4, 32, batch_first=True, norm_first=norm_first, activation="gelu")
        self.e = nn.TransformerEncoder(layer, 2)

    def forward(self, x, pad):
        return self.e(x, src_key_padding_mask=pad)


def sequence_entries():
    S, L = (2, 5, 8), layer
    e = []
    for kind in ("LSTM", "GRU", "RNN"):
        for cfg in ({}, {"num_layers": 2, "bidirectional": True}, {"batch_first": True}):
            for state in (False, True):
                label = "%s_%s%s" % (kind, "_".join("%s" % k for k in cfg) or "plain", "_hx" if state else "")
                e.append(L(label, lambda kind=kind, cfg=cfg, state=state: _Rnn(getattr(nn, kind)(8, 6, **cfg), state), S))
    e += [L("RNN_relu", lambda: _Rnn(nn.RNN(8, 6, nonlinearity="relu", num_layers=2), True), S),
          L("LSTM_proj", lambda: _Rnn(nn.LSTM(8, 6, proj_size=3), False), S),
          L("LSTMCell", lambda: _Cell(nn.LSTMCell(8, 6)), S), L("GRUCell", lambda: _Cell(nn.GRUCell(8, 6)), S),
          L("RNNCell", lambda: _Cell(nn.RNNCell(8, 6)), S),
          L("MultiheadAttention", lambda: _Mha(True, False), (2, 5, 16)),
          L("MultiheadAttention_masked", lambda: _Mha(False, True), (5, 2, 16)),
          L("Transformer", _Seq2Seq, (2, 6, 16), (2, 5, 16)),
          L("TransformerEncoder_post", lambda: _Encoder(False), (2, 5, 16), rb(2, 5)),
          L("TransformerEncoder_pre", lambda: _Encoder(True), (2, 5, 16), rb(2, 5)),
          L("HfBertBlock", HfBertBlock, ri(50, 2, 7), lambda: torch.tensor([[1] * 7, [1] * 5 + [0] * 2])),
          L("LlamaBlock", LlamaBlock, ri(50, 2, 7))]
    return e
