#!/usr/bin/python3
"""Exports switchyard's model zoo: traced TorchScript models with fixed inputs and PyTorch's
own outputs, for parity tests of the TorchScript importer and the plugins.

    /usr/bin/python3 tools/zoo/export_zoo.py OUT_DIR [--models a,b,...] [--batches 1,4] [--force]

Run it with Debian's /usr/bin/python3 (python3-torch 1.13, python3-torchvision 0.14); the
pyenv `python3` first on PATH has no torch. Nothing is downloaded: weights are random
(torchvision `weights=None`) from fixed seeds, so every run writes the same numbers.
Intra-op threads are 2 and OPENBLAS_NUM_THREADS defaults to 1 (design.md, pitfalls).

Models (--models takes base names, which select every variant, or exact stems):

  base                stem(s)                            traced
  resnet18            resnet18                           no_grad
  resnet50            resnet50                           no_grad
  mobilenet_v3_small  mobilenet_v3_small                 no_grad
  vit_b_16            vit_b_16, vit_b_16_fast            grad enabled / no_grad
  bert                bert_decomposed, bert_fast         grad enabled / no_grad
  gpt                 gpt_decomposed, gpt_fast           grad enabled / no_grad

  The `_fast` stems are traced in eval mode under torch.no_grad(), so PyTorch's fused fast
  paths are recorded (aten::_native_multi_head_attention for ViT; for BERT
  aten::_nested_tensor_from_mask -> aten::_transformer_encoder_layer_fwd ->
  aten::to_padded_tensor). The others are traced with grad enabled and hold the decomposed
  ops. gpt_fast holds no fused op: PyTorch 1.13's nn.MultiheadAttention refuses its fast
  path whenever attn_mask is given, and a causal model needs one (zoo.json: fast_path false).

  CNNs: BatchNorm affine parameters are randomised and the running statistics calibrated
  on random images (train mode, cumulative average) so that the outputs carry signal
  (mobilenet_v3_small's logits are ~1e-9 with torchvision's init and identity BN
  statistics) and so that batch-norm folding is tested with non-trivial statistics.
  mobilenet_v3_small's last Linear is re-initialised N(0, 0.1) and vit_b_16's zero-
  initialised head N(0, 0.02).

Files written to OUT_DIR, per stem:

  <stem>.pt                    the traced module (torch.jit.save), traced at the smallest
                               requested batch and verified at every requested batch;
  <stem>.b<B>.pt               only if the trace bakes its batch size (a check at another
                               batch disagrees with eager): one trace per batch instead,
                               and no <stem>.pt. None of the current models needs this;
  <stem>.b<B>.inputs.pt        tuple of input tensors (torch.save; torch::pickle_load
                               reads tuples, not lists);
  <stem>.b<B>.expected.pt      tuple of the outputs of the saved module, loaded back with
                               torch.jit.load and run under no_grad (checked against
                               the eager module within rtol 1e-4);
  <stem>.meta.json             this stem's zoo.json entry (the cache record);
  zoo.json                     the index, rebuilt on every run from the current
                               *.meta.json files: {"format": "switchyard-zoo", "version": 1,
                               "torch": ..., "torchvision": ..., "models": [entry, ...]}.

  Every file name in zoo.json is relative to the directory holding zoo.json. An entry:
  {
    "stem": "bert_fast", "base": "bert", "variant": "fast"|"decomposed"|"default",
    "trace_mode": "no_grad"|"grad", "traced_at_batch": 1, "batch_agnostic": true,
    "fast_path": true,                 # the graph holds at least one fused/nested op
    "fused_ops": {"aten::_transformer_encoder_layer_fwd": 2, ...},
    "notable_ops": {...},              # fused_ops plus attention building blocks
    "op_counts": {"aten::linear": 2, "prim::Constant": 40, ...},   # inlined graph
    "node_count": 120,                 # nodes of the inlined graph, prim ones included
    "fast_vs_decomposed_max_abs_diff": 1.2e-07,   # eager outputs of the two paths (or null)
    "batches": [
      {"batch": 1, "module": "bert_fast.pt", "inputs": "bert_fast.b1.inputs.pt",
       "expected": "bert_fast.b1.expected.pt",
       "input_specs":  [{"dtype": "int64",   "shape": [1, 48]}],
       "output_specs": [{"dtype": "float32", "shape": [1, 8], "std": 0.26, "abs_max": 0.7}],
       "eager_max_abs_diff": 0.0}
    ]
  }

Cache: a stem is skipped when its meta file and every file it lists exist, are newer
than this script and tools/zoo/zoo_models.py, and cover the requested batches. Files are
written under a temporary name and renamed, the meta file last, so an interrupted run
leaves no stem that looks complete.
"""
import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402
import collections  # noqa: E402
import json  # noqa: E402
import re  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

try:
    import torch  # noqa: E402
    import torch.nn as nn  # noqa: E402
    import torchvision  # noqa: E402
except ImportError as e:
    sys.exit(f"export_zoo: {e}; run this with Debian's /usr/bin/python3 "
             "(apt-get install python3-torch python3-torchvision)")

warnings.filterwarnings("ignore", message="The PyTorch API of nested tensors is in prototype")

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import zoo_models  # noqa: E402

SCHEMA_VERSION = 1
SOURCES = [os.path.abspath(__file__), os.path.join(HERE, "zoo_models.py")]

IMAGE_SHAPE = (3, 224, 224)
BERT_T = 48
GPT_T = 64

# Ops that only appear on PyTorch's fused / nested-tensor fast paths.
FUSED_OPS = (
    "aten::_native_multi_head_attention",
    "aten::_transformer_encoder_layer_fwd",
    "aten::_nested_tensor_from_mask",
    "aten::to_padded_tensor",
    "aten::_masked_softmax",
    "aten::_scaled_dot_product_attention",
)
# What decomposed attention is made of.
ATTENTION_OPS = ("aten::softmax", "aten::bmm", "aten::baddbmm", "aten::masked_fill_",
                 "aten::masked_fill", "aten::chunk")

# base -> (variant, stem, trace_mode); order is the export and zoo.json order
VARIANTS = collections.OrderedDict([
    ("resnet18", [("default", "resnet18", "no_grad")]),
    ("resnet50", [("default", "resnet50", "no_grad")]),
    ("mobilenet_v3_small", [("default", "mobilenet_v3_small", "no_grad")]),
    ("vit_b_16", [("decomposed", "vit_b_16", "grad"), ("fast", "vit_b_16_fast", "no_grad")]),
    ("bert", [("decomposed", "bert_decomposed", "grad"), ("fast", "bert_fast", "no_grad")]),
    ("gpt", [("decomposed", "gpt_decomposed", "grad"), ("fast", "gpt_fast", "no_grad")]),
])
ALL_STEMS = [stem for vs in VARIANTS.values() for _, stem, _ in vs]


def log(msg):
    print(msg, flush=True)


# ----------------------------------------------------------------------------- models

def _calibrate_batchnorm(model, seed):
    """Random BN affine parameters and running statistics measured on random images."""
    bns = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for bn in bns:
            bn.weight.copy_(torch.empty_like(bn.weight).uniform_(0.8, 1.2, generator=g))
            bn.bias.copy_(torch.empty_like(bn.bias).normal_(0.0, 0.05, generator=g))
            bn.reset_running_stats()
            bn.momentum = None  # cumulative average over the calibration batches
        model.train()
        for _ in range(2):
            model(torch.randn(8, *IMAGE_SHAPE, generator=g))
        for bn in bns:
            bn.momentum = 0.1
    model.eval()


def build_model(base):
    torch.manual_seed(0)
    if base in ("resnet18", "resnet50", "mobilenet_v3_small"):
        model = getattr(torchvision.models, base)(weights=None)
        if base == "mobilenet_v3_small":
            nn.init.normal_(model.classifier[-1].weight, std=0.1)
        _calibrate_batchnorm(model, seed=1000)
    elif base == "vit_b_16":
        model = torchvision.models.vit_b_16(weights=None)
        nn.init.normal_(model.heads.head.weight, std=0.02)  # torchvision zero-inits it
        nn.init.normal_(model.heads.head.bias, std=0.02)
    elif base == "bert":
        model = zoo_models.BertLike()
    elif base == "gpt":
        model = zoo_models.GptLike()
    else:
        raise KeyError(base)
    return model.eval()


def make_inputs(base, batch):
    g = torch.Generator().manual_seed(100 + batch)
    if base == "bert":
        ids = torch.randint(1, zoo_models.BertLike.VOCAB, (batch, BERT_T), generator=g)
        # padding at the end of some rows (the mask must matter); at batch 1 the only
        # row is padded, at larger batches the first row is full length
        lengths = [BERT_T - 8] if batch == 1 else \
            [BERT_T, BERT_T - 8, BERT_T - 17, BERT_T - 30][:batch] + \
            [BERT_T - 5 * i for i in range(max(0, batch - 4))]
        for row, n in enumerate(lengths):
            ids[row, n:] = zoo_models.PAD_ID
        return (ids,)
    if base == "gpt":
        return (torch.randint(0, zoo_models.GptLike.VOCAB, (batch, GPT_T), generator=g),)
    return (torch.randn(batch, *IMAGE_SHAPE, generator=g),)


def grad_mode(trace_mode):
    return torch.no_grad() if trace_mode == "no_grad" else torch.enable_grad()


def as_tuple(out):
    if isinstance(out, torch.Tensor):
        return (out,)
    if isinstance(out, (tuple, list)):
        return tuple(out)
    raise TypeError(f"unexpected output type {type(out)}")


def run_eager(model, inputs, trace_mode):
    with grad_mode(trace_mode):
        return tuple(t.detach().contiguous() for t in as_tuple(model(*inputs)))


# ----------------------------------------------------------------------------- files

def atomic_torch_save(obj, path):
    tmp = path + ".tmp"
    torch.save(obj, tmp)
    os.replace(tmp, path)


def atomic_jit_save(module, path, example_inputs=()):
    """Saves a traced module with the shapes it was traced at in switchyard_inputs.json
    (a saved trace forgets them; switchyard's importer needs them for size arithmetic)."""
    tmp = path + ".tmp"
    specs = {"inputs": [tensor_spec(t) for t in example_inputs]}
    torch.jit.save(module, tmp, _extra_files={"switchyard_inputs.json": json.dumps(specs)})
    os.replace(tmp, path)


def atomic_json(obj, path):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(obj, f, indent=1)
        f.write("\n")
    os.replace(tmp, path)


def stem_files_pattern(stem):
    return re.compile(r"^" + re.escape(stem) + r"(\.b\d+)?(\.inputs|\.expected)?\.pt$")


def remove_stale_files(out_dir, stem, keep):
    pat = stem_files_pattern(stem)
    for name in os.listdir(out_dir):
        if pat.match(name) and name not in keep:
            os.remove(os.path.join(out_dir, name))


def entry_files(entry):
    names = set()
    for b in entry["batches"]:
        names.update((b["module"], b["inputs"], b["expected"]))
    return sorted(names)


def source_mtime():
    return max(os.path.getmtime(p) for p in SOURCES)


def load_current_meta(out_dir, stem):
    """The stem's meta entry if it and all its files are newer than the sources, else None."""
    path = os.path.join(out_dir, stem + ".meta.json")
    newest_source = source_mtime()
    try:
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


# ----------------------------------------------------------------------------- graph facts

def op_counts(module):
    counts = collections.Counter(n.kind() for n in module.inlined_graph.nodes())
    return dict(sorted(counts.items()))


def ops_summary(stem, counts):
    fused = [f"{counts[k]}x {k[6:]}" for k in FUSED_OPS if k in counts]
    attn = [f"{counts[k]}x {k[6:]}" for k in ATTENTION_OPS if k in counts]
    parts = []
    parts.append("fused: " + ", ".join(fused) if fused else "no fused ops")
    if attn:
        parts.append("decomposed attention: " + ", ".join(attn))
    n_ops = sum(v for k, v in counts.items() if not k.startswith("prim::"))
    return f"  {stem} ops: " + "; ".join(parts) + f" | {n_ops} aten nodes, " \
        f"{sum(counts.values())} nodes inlined"


def tensor_spec(t, with_stats=False):
    spec = {"dtype": str(t.dtype).replace("torch.", ""), "shape": list(t.shape)}
    if with_stats and t.is_floating_point():
        spec["std"] = float(t.float().std()) if t.numel() > 1 else 0.0
        spec["abs_max"] = float(t.abs().max())
    return spec


def max_abs_diff(a, b):
    return max(float((x.double() - y.double()).abs().max()) for x, y in zip(a, b))


def check_close(what, got, ref, rtol=1e-4):
    if len(got) != len(ref):
        raise AssertionError(f"{what}: {len(got)} outputs vs {len(ref)}")
    for i, (x, y) in enumerate(zip(got, ref)):
        if x.shape != y.shape or x.dtype != y.dtype:
            raise AssertionError(f"{what}: output {i} is {x.dtype}{list(x.shape)}, "
                                 f"expected {y.dtype}{list(y.shape)}")
        atol = rtol * max(1.0, float(y.abs().max()))
        if not torch.allclose(x, y, rtol=rtol, atol=atol):
            raise AssertionError(f"{what}: output {i} differs by "
                                 f"{float((x - y).abs().max()):.3g} (atol {atol:.3g})")


# ----------------------------------------------------------------------------- export

class BatchBaked(Exception):
    pass


def trace_and_check(model, trace_mode, inputs, trace_batch, batches, eager, path, seconds):
    """Traces at trace_batch, saves to path, reloads, and returns the reloaded module's
    outputs per batch (adding the run time per batch to seconds). Raises BatchBaked when
    another batch disagrees with eager."""
    with grad_mode(trace_mode), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # TracerWarnings about asserts and python bools
        traced = torch.jit.trace(model, inputs[trace_batch], check_trace=False)
    example = inputs[trace_batch]
    atomic_jit_save(traced, path, example if isinstance(example, (tuple, list)) else (example,))
    loaded = torch.jit.load(path)
    outputs = {}
    for b in batches:
        t0 = time.time()
        try:
            with torch.no_grad():
                got = tuple(t.detach().contiguous() for t in as_tuple(loaded(*inputs[b])))
            check_close(f"traced vs eager at batch {b}", got, eager[b])
        except (RuntimeError, AssertionError) as e:
            if b == trace_batch:
                raise
            raise BatchBaked(str(e)) from e
        outputs[b] = got
        seconds[b] = seconds.get(b, 0.0) + time.time() - t0
    return loaded, outputs


def export_stem(out_dir, base, variant, stem, trace_mode, batches, model, eager_cache):
    t_stem = time.time()
    inputs = {b: make_inputs(base, b) for b in batches}
    seconds = {}  # per batch: eager and traced runs, saving

    def eager_for(mode, b):
        key = (mode, b)
        if key not in eager_cache:
            t0 = time.time()
            eager_cache[key] = run_eager(model, inputs[b], mode)
            seconds[b] = seconds.get(b, 0.0) + time.time() - t0
        return eager_cache[key]

    eager = {b: eager_for(trace_mode, b) for b in batches}
    trace_batch = batches[0]
    module_of = {}
    t0, runs_before = time.time(), sum(seconds.values())
    try:
        path = os.path.join(out_dir, stem + ".pt")
        module, outputs = trace_and_check(model, trace_mode, inputs, trace_batch, batches,
                                          eager, path, seconds)
        module_of = {b: stem + ".pt" for b in batches}
        batch_agnostic = True
    except BatchBaked as e:
        why = (str(e).strip().splitlines() or ["?"])[-1]
        log(f"  {stem}: the trace at batch {trace_batch} does not generalise ({why}); "
            "tracing once per batch")
        os.remove(path)
        outputs = {}
        for b in batches:
            name = f"{stem}.b{b}.pt"
            module, out_b = trace_and_check(model, trace_mode, inputs, b, [b], eager,
                                            os.path.join(out_dir, name), seconds)
            outputs[b] = out_b[b]
            module_of[b] = name
        batch_agnostic = False
    t_runs = sum(seconds.values()) - runs_before
    log(f"exporting {stem} trace ({'no_grad' if trace_mode == 'no_grad' else 'grad enabled'}"
        f", at batch {trace_batch}) + save ... {time.time() - t0 - t_runs:.1f} s")

    counts = op_counts(module)
    log(ops_summary(stem, counts))

    # The other path's eager outputs (fast vs decomposed) must agree with this one's.
    other_mode = None
    if len(VARIANTS[base]) > 1:
        other_mode = "grad" if trace_mode == "no_grad" else "no_grad"
    cross_diff = None
    if other_mode:
        cross_diff = 0.0
        for b in batches:
            other = eager_for(other_mode, b)
            check_close(f"{stem}: fast vs decomposed eager at batch {b}", eager[b], other,
                        rtol=1e-3)
            cross_diff = max(cross_diff, max_abs_diff(eager[b], other))

    batch_entries = []
    for b in batches:
        t0 = time.time()
        in_name, exp_name = f"{stem}.b{b}.inputs.pt", f"{stem}.b{b}.expected.pt"
        atomic_torch_save(tuple(t.contiguous() for t in inputs[b]), os.path.join(out_dir, in_name))
        atomic_torch_save(outputs[b], os.path.join(out_dir, exp_name))
        out_specs = [tensor_spec(t, with_stats=True) for t in outputs[b]]
        for i, s in enumerate(out_specs):
            if "std" in s and not s["std"] > 1e-3:
                raise AssertionError(f"{stem} batch {b}: output {i} has no signal "
                                     f"(std {s['std']:.3g})")
        batch_entries.append({
            "batch": b,
            "module": module_of[b],
            "inputs": in_name,
            "expected": exp_name,
            "input_specs": [tensor_spec(t) for t in inputs[b]],
            "output_specs": out_specs,
            "eager_max_abs_diff": max_abs_diff(outputs[b], eager[b]),
        })
        stds = ", ".join(f"{s.get('std', float('nan')):.3g}" for s in out_specs)
        log(f"exporting {stem} batch {b} ... {seconds.get(b, 0.0) + time.time() - t0:.1f} s "
            f"(output std {stds}, |traced - eager| {batch_entries[-1]['eager_max_abs_diff']:.2g})")

    fused = {k: counts[k] for k in FUSED_OPS if k in counts}
    entry = {
        "schema_version": SCHEMA_VERSION,
        "stem": stem,
        "base": base,
        "variant": variant,
        "trace_mode": trace_mode,
        "traced_at_batch": trace_batch,
        "batch_agnostic": batch_agnostic,
        "fast_path": bool(fused),
        "fused_ops": fused,
        "notable_ops": {k: counts[k] for k in FUSED_OPS + ATTENTION_OPS if k in counts},
        "op_counts": counts,
        "node_count": sum(counts.values()),
        "fast_vs_decomposed_max_abs_diff": cross_diff,
        "batches": batch_entries,
    }
    remove_stale_files(out_dir, stem, set(entry_files(entry)))
    atomic_json(entry, os.path.join(out_dir, stem + ".meta.json"))
    log(f"exported {stem} in {time.time() - t_stem:.1f} s")
    return entry


def write_index(out_dir):
    models = []
    for stem in ALL_STEMS:
        entry = load_current_meta(out_dir, stem)
        if entry is not None:
            entry = dict(entry)
            entry.pop("schema_version", None)
            models.append(entry)
    index = {
        "format": "switchyard-zoo",
        "version": SCHEMA_VERSION,
        "torch": torch.__version__,
        "torchvision": torchvision.__version__,
        "models": models,
    }
    atomic_json(index, os.path.join(out_dir, "zoo.json"))
    return index


def parse_selection(text):
    if not text:
        return list(ALL_STEMS)
    wanted = set()
    for item in (s.strip() for s in text.split(",")):
        if not item:
            continue
        if item in VARIANTS:  # a base name selects all its variants
            wanted.update(stem for _, stem, _ in VARIANTS[item])
        elif item in ALL_STEMS:
            wanted.add(item)
        else:
            sys.exit(f"export_zoo: unknown model '{item}'; bases: {', '.join(VARIANTS)}; "
                     f"stems: {', '.join(ALL_STEMS)}")
    return [s for s in ALL_STEMS if s in wanted]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out_dir")
    ap.add_argument("--models", default="", help="comma-separated base names or stems "
                    "(default: all)")
    ap.add_argument("--batches", default="1,4", help="comma-separated batch sizes (default 1,4)")
    ap.add_argument("--force", action="store_true", help="ignore the cache")
    args = ap.parse_args(argv)

    try:
        batches = sorted({int(b) for b in args.batches.split(",") if b.strip()})
    except ValueError:
        sys.exit(f"export_zoo: bad --batches '{args.batches}'")
    if not batches or batches[0] < 1:
        sys.exit("export_zoo: --batches needs positive integers")
    stems = parse_selection(args.models)

    torch.set_num_threads(2)
    os.makedirs(args.out_dir, exist_ok=True)
    out_dir = os.path.abspath(args.out_dir)
    t_all = time.time()
    log(f"export_zoo: {len(stems)} models, batches {batches}, into {out_dir} "
        f"(torch {torch.__version__}, {torch.get_num_threads()} threads)")

    exported = cached = 0
    for base, variants in VARIANTS.items():
        todo = []
        for variant, stem, trace_mode in variants:
            if stem not in stems:
                continue
            entry = None if args.force else load_current_meta(out_dir, stem)
            if entry is not None and set(batches) <= {b["batch"] for b in entry["batches"]}:
                log(f"cached {stem}")
                cached += 1
            else:
                todo.append((variant, stem, trace_mode))
        if not todo:
            continue
        t0 = time.time()
        model = build_model(base)
        log(f"built {base} ({sum(p.numel() for p in model.parameters()) / 1e6:.1f} M parameters)"
            f" ... {time.time() - t0:.1f} s")
        eager_cache = {}
        for variant, stem, trace_mode in todo:
            export_stem(out_dir, base, variant, stem, trace_mode, batches, model, eager_cache)
            exported += 1
        del model, eager_cache

    index = write_index(out_dir)
    log(f"export_zoo: {exported} exported, {cached} cached, {len(index['models'])} in zoo.json, "
        f"{time.time() - t_all:.1f} s total")
    return 0


if __name__ == "__main__":
    sys.exit(main())
