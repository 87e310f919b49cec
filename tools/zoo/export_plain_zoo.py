#!/usr/bin/python3
"""Exports switchyard's plain zoo: models traced and saved exactly as users do,
`torch.jit.trace(model, example).save(path)`, with no extra files and nothing recorded
about the traced shapes, plus inputs and PyTorch's eager outputs at shapes other than
the traced one.

    /usr/bin/python3 tools/zoo/export_plain_zoo.py OUT_DIR [--models a,b,...] [--force] [--list]

Run it with Debian's /usr/bin/python3 (python3-torch 1.13, python3-torchvision 0.14).
Nothing is downloaded: weights are random from fixed seeds (torchvision `weights=None`),
so every run writes the same numbers. One intra-op thread by default (--threads): on a
shared 2-core machine, 2 threads stalled at barriers and made forwards up to 100x slower.

Every model is traced at one shape (batch 1; sequence models at length 16) and checked at
two other shapes (batch 2 and 3; sequence models also at lengths 7 and 29): the saved
trace, loaded back with torch.jit.load, must match the eager module there (PyTorch's own
TorchScript generalises; a model where it does not is an export error). The test
(tests/host/torchscript/test_plain_zoo.cpp) runs switchyard on those other shapes only,
so a runtime that freezes the traced shape cannot pass.

Image sizes are small to keep CI cheap: 64 px, inception_v3 112 px (it needs >= 75),
maxvit_t 224 px (its 7x7 partitions need 224), clip_vision 32 px; inception_v3 without its auxiliary
head (aux_logits=False: in train mode, as calibration runs it, the head needs >= 299 px). vit_b_16 is built with image_size=64
(16 patches). maxvit_t, the costliest forward, is traced at batch 2 and checked at batch
1 only. The models that join channels (densenet121, googlenet, inception_v3,
squeezenet1_1) are traced at batch 2 and checked at batches 1 and 3: at batch 1 their
concatenations are written in place, a path of their own. resnet18, vit_b_16, bert_hf and
llama_like are also saved with bfloat16 and float16 weights (<stem>_bf16, <stem>_fp16,
taking inputs of that dtype; traced in float32, then converted, since LibTorch 1.13 runs
few half-precision kernels on a CPU): their expected outputs are the float64 forward of
the rounded weights on the rounded inputs, what [precision] compute = "fp32" computes. Models with batch norm get random affine parameters and running statistics
measured on random images (as tools/zoo/export_zoo.py does) so that outputs carry signal.

Files written to OUT_DIR, per stem:
  <stem>.pt                         the plain trace (torch.jit.trace(...).save(...));
  <stem>.<label>.inputs.pt          tuple of input tensors (label: b2, b3, b2_t7, b3_t29);
  <stem>.<label>.expected.pt        tuple of the eager module's outputs, computed in
                                    float64 (module and float inputs cast) and rounded
                                    to float32;
  <stem>.meta.json                  this stem's manifest entry (the cache record);
  zoo.json                          the manifest: {"format": "switchyard-plain-zoo",
      "version": 1, "torch", "torchvision", "models": [{"stem", "family", "source",
      "module", "trace_mode", "traced_at": {"shape", "input_specs"}, "parameters",
      "module_bytes", "op_counts", "sets": [{"label", "shape", "inputs", "expected",
      "input_specs", "output_specs", "trace_vs_eager_max_abs_diff",
      "pytorch_float32_of_bound": {"eager", "trace"}}]}]}
Why a float64 reference: randomly initialised deep nets amplify rounding. PyTorch's own
float32 inception_v3 is ~0.8e-4 (relative) from the exact result, and two float32 orders of
summation (BN folded into conv, or not) differ by up to 1.01e-4, so a float32 reference would
fail a correct implementation. Against the float64 result PyTorch's float32 eager and trace
must stay within 0.9 of the test's bound (pytorch_float32_of_bound) or the export fails.
How close depends on the CPU's summation order: inception_v3 at 96 px, batch 3, was 0.95
of the bound on an AMD EPYC (OpenBLAS single-threaded Haswell kernels) and under 0.8 on
Intel hosts; at 112 px it is 0.55-0.58 there.

File names in zoo.json are relative to its directory. A stem is skipped (cached) when its
meta file and files are newer than this script and tools/zoo/plain_zoo_models.py.
"""
import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402
import copy  # noqa: E402
import io  # noqa: E402
import json  # noqa: E402
import shutil  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
import zlib  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from export_zoo import (as_tuple, atomic_json, atomic_torch_save, check_close,  # noqa: E402
                        log, max_abs_diff, op_counts, tensor_spec)
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torchvision  # noqa: E402
import plain_zoo_models as pzm  # noqa: E402

warnings.filterwarnings("ignore", message="torch.meshgrid")  # inside torchvision's maxvit

SCHEMA_VERSION = 1
SOURCES = [os.path.abspath(__file__), os.path.join(HERE, "plain_zoo_models.py")]

IMAGE_SETS = [{"batch": 2}, {"batch": 3}]
SEQ_TRACE = {"batch": 1, "seq": 16}
# Models that join channels: at batch 1 a channel cat's inputs are written into its output
# (README, "Memory planning"), so they are checked there too, traced at batch 2.
CAT_SHAPES = {"trace_at": {"batch": 2}, "sets": [{"batch": 1}, {"batch": 3}]}
SEQ_SETS = [{"batch": 2, "seq": 7}, {"batch": 3, "seq": 29}]


class Spec:
    """One model: how to build it, its inputs for a shape, where it is traced and checked."""

    def __init__(self, stem, family, build, inputs, trace_at, sets, source="torchvision",
                 trace_mode="grad", image=None, note="", half=None):
        self.stem, self.family, self.build, self.inputs = stem, family, build, inputs
        self.trace_at, self.sets, self.source = trace_at, sets, source
        self.trace_mode, self.image, self.note = trace_mode, image, note
        self.half = half  # torch.float16 or torch.bfloat16: saved in that dtype (half_variant)


def half_variant(spec, dtype):
    """The same model saved with float16 or bfloat16 weights, taking inputs of that dtype.
    Its expected outputs are the float64 forward of the rounded weights on the rounded
    inputs: what [precision] compute = "fp32" (the default for such a model) computes."""
    name = "bf16" if dtype == torch.bfloat16 else "fp16"
    return Spec(f"{spec.stem}_{name}", spec.family, spec.build, spec.inputs, spec.trace_at, spec.sets,
                spec.source, spec.trace_mode, spec.image,
                f"saved as {dtype} (torch.jit.trace(...).to({dtype})); expected: float64 forward of "
                "the rounded weights", half=dtype)


# ----------------------------------------------------------------------------- models

def calibrate_batchnorm(model, image, seed):
    """Random BN affine parameters and running statistics measured on random images."""
    bns = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    if not bns:
        return
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for bn in bns:
            bn.weight.copy_(torch.empty_like(bn.weight).uniform_(0.8, 1.2, generator=g))
            bn.bias.copy_(torch.empty_like(bn.bias).normal_(0.0, 0.05, generator=g))
            bn.reset_running_stats()
            bn.momentum = None  # cumulative average over the calibration batches
        model.train()
        model(torch.randn(8, 3, image, image, generator=g))
        for bn in bns:
            bn.momentum = 0.1


def torchvision_builder(name, image, **kwargs):
    def build():
        model = getattr(torchvision.models, name)(weights=None, **kwargs)
        calibrate_batchnorm(model, image, seed=seed_of(name) + 1)
        if name.startswith("vit_"):  # torchvision zero-initialises the head
            nn.init.normal_(model.heads.head.weight, std=0.02)
        return model
    return build


def image_inputs(image):
    def make(g, shape):
        return (torch.randn(shape["batch"], 3, image, image, generator=g),)
    return make


def image_spec(stem, family, image=64, trace_at=None, sets=None, **kwargs):
    return Spec(stem, family, torchvision_builder(stem, image, **kwargs), image_inputs(image),
                trace_at or {"batch": 1}, sets or IMAGE_SETS, image=image)


def bert_inputs(g, shape):
    b, t = shape["batch"], shape["seq"]
    ids = torch.randint(1, pzm.HfBert.VOCAB, (b, t), generator=g)
    types = torch.zeros(b, t, dtype=torch.long)
    types[:, t // 2:] = 1  # sentence B in the second half
    mask = torch.ones(b, t, dtype=torch.long)
    for row in range(b):  # padding at the end of every row but the first
        n = t - (row * t) // 4
        mask[row, n:] = 0
        ids[row, n:] = 0
    return ids, types, mask


def masked_ids_inputs(vocab):
    """Token ids and the int64 0/1 attention mask a tokenizer gives, rows padded at the end."""
    def make(g, shape):
        b, t = shape["batch"], shape["seq"]
        ids = torch.randint(1, vocab, (b, t), generator=g)
        mask = torch.ones(b, t, dtype=torch.long)
        for row in range(1, b):  # every row but the first is padded
            n = max(1, t - (row * t) // 3)
            mask[row, n:] = 0
            ids[row, n:] = 0
        return ids, mask
    return make


def ids_inputs(vocab):
    def make(g, shape):
        return (torch.randint(0, vocab, (shape["batch"], shape["seq"]), generator=g),)
    return make


def seq2seq_inputs(g, shape):
    b, t = shape["batch"], shape["seq"]
    v = pzm.Seq2SeqTransformer.VOCAB
    return (torch.randint(0, v, (b, t), generator=g),
            torch.randint(0, v, (b, max(3, t - 4)), generator=g))  # target 4 shorter


def lstm_inputs(g, shape):
    return (torch.randn(shape["batch"], shape["seq"], pzm.LstmTagger.FEATURES, generator=g),)


def gru_inputs(g, shape):
    b, t = shape["batch"], shape["seq"]
    return (torch.randn(t, b, pzm.GruSeq.FEATURES, generator=g),
            torch.randn(pzm.GruSeq.LAYERS, b, pzm.GruSeq.HIDDEN, generator=g) * 0.5)


def seq_spec(stem, family, cls, inputs, **kwargs):
    return Spec(stem, family, cls, inputs, SEQ_TRACE, SEQ_SETS, source="plain_zoo_models.py",
                **kwargs)


SPECS = [
    image_spec("resnet18", "resnet"),
    image_spec("resnext50_32x4d", "resnext"),
    image_spec("wide_resnet50_2", "wide_resnet"),
    image_spec("densenet121", "densenet", **CAT_SHAPES),
    image_spec("googlenet", "googlenet", init_weights=True, **CAT_SHAPES),
    image_spec("inception_v3", "inception", image=112, init_weights=True, aux_logits=False, **CAT_SHAPES),
    image_spec("mobilenet_v2", "mobilenet_v2"),
    image_spec("mobilenet_v3_small", "mobilenet_v3"),
    image_spec("mnasnet0_5", "mnasnet"),
    image_spec("shufflenet_v2_x0_5", "shufflenet"),
    image_spec("squeezenet1_1", "squeezenet", **CAT_SHAPES),
    image_spec("efficientnet_b0", "efficientnet"),
    image_spec("regnet_y_400mf", "regnet"),
    image_spec("convnext_tiny", "convnext"),
    image_spec("vit_b_16", "vit", image_size=64),
    image_spec("swin_t", "swin"),
    image_spec("swin_v2_t", "swin"),
    image_spec("maxvit_t", "maxvit", image=224, trace_at={"batch": 2}, sets=[{"batch": 1}]),
    image_spec("alexnet", "alexnet"),
    image_spec("vgg11", "vgg"),
    seq_spec("transformer_seq2seq", "nn.Transformer", pzm.Seq2SeqTransformer, seq2seq_inputs,
             trace_mode="no_grad",
             note="traced under torch.no_grad(): the encoder takes PyTorch's fused fast path"),
    seq_spec("lstm_bidir", "nn.LSTM", pzm.LstmTagger, lstm_inputs),
    seq_spec("gru_stateful", "nn.GRU", pzm.GruSeq, gru_inputs),
    seq_spec("bert_hf", "bert", pzm.HfBert, bert_inputs),
    seq_spec("llama_like", "llama", pzm.LlamaLike, ids_inputs(pzm.LlamaLike.VOCAB)),
    # Hugging Face's input idioms (int64 masks, pixel_values converted with .to(dtype)).
    seq_spec("distilbert_mask", "distilbert", pzm.DistilBertMasked,
             masked_ids_inputs(pzm.DistilBertMasked.VOCAB),
             note="int64 attention_mask used as masked_fill(mask == 0, finfo.min)"),
    seq_spec("mean_pool_mask", "sentence-embedding", pzm.MeanPoolEncoder,
             masked_ids_inputs(pzm.MeanPoolEncoder.VOCAB),
             note="int64 mask in (1.0 - mask[:, None, None, :]) * -10000.0 and h * mask"),
    Spec("clip_vision", "clip", pzm.ClipVision, image_inputs(pzm.ClipVision.IMAGE), {"batch": 1},
         IMAGE_SETS, source="plain_zoo_models.py", image=pzm.ClipVision.IMAGE,
         note="float pixel_values converted by pixel_values.to(dtype=...) before the conv"),
]
# Half-precision checkpoints: a CNN, a ViT, an encoder and a decoder, in each half dtype.
SPECS += [half_variant(s, dtype) for s in SPECS if s.stem in ("resnet18", "vit_b_16", "bert_hf", "llama_like")
          for dtype in (torch.bfloat16, torch.float16)]
BY_STEM = {s.stem: s for s in SPECS}


def seed_of(text):
    return zlib.crc32(text.encode()) % 100000


def shape_label(shape):
    label = f"b{shape['batch']}"
    return label + (f"_t{shape['seq']}" if "seq" in shape else "")


def make_inputs(spec, shape):
    g = torch.Generator().manual_seed(seed_of(spec.stem) + 1000 * shape["batch"] + shape.get("seq", 0))
    inputs = tuple(t.contiguous() for t in spec.inputs(g, shape))
    if spec.half is None:
        return inputs
    return tuple(t.to(spec.half) if t.is_floating_point() else t for t in inputs)


def as_float32(inputs):
    """A half variant's inputs as float32 (exact), for PyTorch's own float32 forward."""
    return tuple(t.float() if t.is_floating_point() else t for t in inputs)


# ----------------------------------------------------------------------------- export

def grad_mode(trace_mode):
    return torch.no_grad() if trace_mode == "no_grad" else torch.enable_grad()


def run(module, inputs, trace_mode):
    with grad_mode(trace_mode):
        return tuple(t.detach().contiguous() for t in as_tuple(module(*inputs)))


def plain_save(traced, out_dir, stem):
    """Saves as a user does; a scratch folder keeps the name (the archive's folder) and
    makes the write atomic."""
    scratch = os.path.join(out_dir, ".partial")
    os.makedirs(scratch, exist_ok=True)
    tmp = os.path.join(scratch, stem + ".pt")
    traced.save(tmp)
    path = os.path.join(out_dir, stem + ".pt")
    os.replace(tmp, path)
    return path


def bound_ratio(got, ref):
    """max |got - ref| / (1e-4 * max(1, max |ref|)) over outputs: the test's criterion."""
    return max(float((g.double() - r.double()).abs().max()) / (1e-4 * max(1.0, float(r.abs().max())))
               for g, r in zip(got, ref))


def reference(model64, inputs, trace_mode):
    """The module's outputs computed in float64, rounded to float32."""
    wide = tuple(t.double() if t.is_floating_point() else t for t in inputs)
    return tuple(t.float() for t in run(model64, wide, trace_mode))


def export(out_dir, spec):
    t_start = time.time()
    torch.manual_seed(seed_of(spec.stem.replace("_bf16", "").replace("_fp16", "")))  # a half variant: the same weights
    model = spec.build().eval()
    if spec.half is not None:
        model = model.to(spec.half).float()  # the weights as the half checkpoint holds them
    model64 = copy.deepcopy(model).double()
    t_built = time.time()
    example = as_float32(make_inputs(spec, spec.trace_at))
    with grad_mode(spec.trace_mode), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # TracerWarnings about python bools and asserts
        traced = torch.jit.trace(model, example, check_trace=False)
    if spec.half is not None:  # LibTorch 1.13 on a CPU runs few half kernels: traced in float32
        buffer = io.BytesIO()
        torch.jit.save(traced, buffer)
        buffer.seek(0)
        trace32 = traced  # PyTorch's own trace in float32, for the checks below
        traced = torch.jit.load(buffer).to(spec.half)  # a copy: the trace shares the eager weights
    path = plain_save(traced, out_dir, spec.stem)
    t_traced = time.time()
    loaded = torch.jit.load(path)
    if spec.half is None:
        check_close(f"{spec.stem}: loaded trace vs eager at the traced shape",
                    run(loaded, example, "no_grad"), run(model, example, spec.trace_mode))
    else:
        loaded = trace32

    sets = []
    for shape in spec.sets:
        label = shape_label(shape)
        inputs = make_inputs(spec, shape)
        eager = run(model, as_float32(inputs), spec.trace_mode)
        try:
            traced_out = run(loaded, as_float32(inputs), "no_grad")
            check_close(f"{spec.stem} {label}: PyTorch's own trace vs eager", traced_out, eager)
        except RuntimeError as e:
            raise AssertionError(f"{spec.stem} {label}: PyTorch's own trace fails here: "
                                 f"{str(e).strip().splitlines()[-1]}") from e
        expected = reference(model64, as_float32(inputs), spec.trace_mode)
        # PyTorch's float32 result must meet the test's criterion against the reference
        # itself, with room for another float32 implementation beside it.
        errors = {"eager": bound_ratio(eager, expected), "trace": bound_ratio(traced_out, expected)}
        if max(errors.values()) > 0.9:
            raise AssertionError(f"{spec.stem} {label}: PyTorch's float32 outputs are "
                                 f"{max(errors.values()):.2f} of the bound from the float64 "
                                 "reference; the model is too ill-conditioned to test")
        out_specs = [tensor_spec(t, with_stats=True) for t in expected]
        for i, s in enumerate(out_specs):
            if "std" in s and not s["std"] > 1e-3:
                raise AssertionError(f"{spec.stem} {label}: output {i} has no signal "
                                     f"(std {s['std']:.3g})")
        in_name, exp_name = f"{spec.stem}.{label}.inputs.pt", f"{spec.stem}.{label}.expected.pt"
        atomic_torch_save(inputs, os.path.join(out_dir, in_name))
        atomic_torch_save(expected, os.path.join(out_dir, exp_name))
        sets.append({"label": label, "shape": shape, "inputs": in_name, "expected": exp_name,
                     "input_specs": [tensor_spec(t) for t in inputs],
                     "output_specs": out_specs,
                     "trace_vs_eager_max_abs_diff": max_abs_diff(traced_out, eager),
                     "pytorch_float32_of_bound": errors})

    entry = {
        "schema_version": SCHEMA_VERSION,
        "stem": spec.stem,
        "family": spec.family,
        "source": spec.source,
        "module": spec.stem + ".pt",
        "trace_mode": spec.trace_mode,
        "note": spec.note,
        "traced_at": {"shape": spec.trace_at, "input_specs": [tensor_spec(t) for t in example]},
        "parameters": sum(p.numel() for p in model.parameters()),
        "module_bytes": os.path.getsize(path),
        "op_counts": op_counts(loaded),
        "sets": sets,
    }
    atomic_json(entry, os.path.join(out_dir, spec.stem + ".meta.json"))
    stds = "; ".join(", ".join(f"{o.get('std', float('nan')):.3g}" for o in s["output_specs"])
                     for s in sets)
    f32 = max(max(s["pytorch_float32_of_bound"].values()) for s in sets)
    log(f"exported {spec.stem:20s} {time.time() - t_start:5.1f} s (build {t_built - t_start:.1f}, "
        f"trace+save {t_traced - t_built:.1f}, checks {time.time() - t_traced:.1f}), {entry['module_bytes'] / 2**20:6.1f} MiB, traced at "
        f"{shape_label(spec.trace_at)}, checked at {', '.join(s['label'] for s in sets)}; "
        f"output std {stds}; PyTorch float32 at {f32:.2g} of the bound")
    return entry


# ----------------------------------------------------------------------------- cache, index

def entry_files(entry):
    names = {entry["module"]}
    for s in entry["sets"]:
        names.update((s["inputs"], s["expected"]))
    return sorted(names)


def load_current_meta(out_dir, stem):
    """The stem's entry if it and all its files are newer than the sources, else None."""
    newest_source = max(os.path.getmtime(p) for p in SOURCES)
    try:
        path = os.path.join(out_dir, stem + ".meta.json")
        if os.path.getmtime(path) <= newest_source:
            return None
        with open(path) as f:
            entry = json.load(f)
        if entry.get("schema_version") != SCHEMA_VERSION:
            return None
        for name in entry_files(entry):
            if os.path.getmtime(os.path.join(out_dir, name)) <= newest_source:
                return None
        return entry
    except (OSError, ValueError, KeyError):
        return None


def write_index(out_dir):
    models = []
    for spec in SPECS:
        entry = load_current_meta(out_dir, spec.stem)
        if entry is not None:
            entry = dict(entry)
            entry.pop("schema_version", None)
            models.append(entry)
    atomic_json({"format": "switchyard-plain-zoo", "version": SCHEMA_VERSION,
                 "torch": torch.__version__, "torchvision": torchvision.__version__,
                 "models": models}, os.path.join(out_dir, "zoo.json"))
    return models


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out_dir", nargs="?")
    ap.add_argument("--models", default="", help="comma-separated stems (default: all)")
    ap.add_argument("--force", action="store_true", help="ignore the cache")
    ap.add_argument("--list", action="store_true", help="list the models and exit")
    ap.add_argument("--threads", type=int, default=1, help="intra-op threads (default 1)")
    args = ap.parse_args(argv)
    if args.list:
        for s in SPECS:
            print(f"{s.stem:20s} {s.family:15s} traced at {shape_label(s.trace_at)}, checked at "
                  f"{', '.join(shape_label(x) for x in s.sets)}"
                  + (f", {s.image} px" if s.image else "") + (f" ({s.note})" if s.note else ""))
        return 0
    if not args.out_dir:
        ap.error("OUT_DIR is required")
    wanted = [m.strip() for m in args.models.split(",") if m.strip()] or [s.stem for s in SPECS]
    unknown = [m for m in wanted if m not in BY_STEM]
    if unknown:
        sys.exit(f"export_plain_zoo: unknown model(s) {', '.join(unknown)}; "
                 f"known: {', '.join(BY_STEM)}")

    torch.set_num_threads(max(1, args.threads))
    os.makedirs(args.out_dir, exist_ok=True)
    out_dir = os.path.abspath(args.out_dir)
    t_all = time.time()
    log(f"export_plain_zoo: {len(wanted)} models into {out_dir} (torch {torch.__version__}, "
        f"torchvision {torchvision.__version__}, {torch.get_num_threads()} threads)")
    exported = cached = 0
    failed = []
    for spec in SPECS:
        if spec.stem not in wanted:
            continue
        if not args.force and load_current_meta(out_dir, spec.stem) is not None:
            cached += 1
            continue
        try:
            export(out_dir, spec)
            exported += 1
        except AssertionError as e:
            log(f"export_plain_zoo: FAILED {e}")
            failed.append(spec.stem)
    shutil.rmtree(os.path.join(out_dir, ".partial"), ignore_errors=True)
    models = write_index(out_dir)
    log(f"export_plain_zoo: {exported} exported, {cached} cached, {len(models)} in zoo.json, "
        f"{time.time() - t_all:.1f} s total")
    if failed:
        log(f"export_plain_zoo: {len(failed)} failed: {', '.join(failed)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
