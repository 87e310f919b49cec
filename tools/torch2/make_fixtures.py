"""Exports models with torch.export and saves them the plain way (torch.export.save), with
inputs at shapes other than the exported example and torch 2's own eager outputs.

    PY=$(tools/torch2/find_python.sh 2.6.0)        # a venv from tools/torch2/setup_venv.sh
    $PY tools/torch2/make_fixtures.py OUT_DIR [--set ci|zoo] [--models a,b] [--list]

--set ci (default) writes the small models committed under tests/fixtures/pt2/ (a few
hundred KB per torch version); --set zoo exports the plain zoo's families at full size
(torchvision classifiers, nn.Transformer, LSTM/GRU, HF-style BERT, a Llama-style decoder)
for the parity run that tests/host/pt2/test_pt2_zoo.cpp does when a venv is present.

Every model has a dynamic batch (torch.export.Dim), and a dynamic sequence length where
one applies. Nothing is downloaded: weights are random from fixed seeds.

Files per model stem, in OUT_DIR:
  <stem>.pt2                      torch.export.save(torch.export.export(...), path)
  <stem>.<label>.inputs.json      inputs at another shape, switchyard's tensor JSON
  <stem>.<label>.expected.json    torch 2's eager outputs for those inputs (float32), by the
                                  program's output names (`switchyard verify --expected`)
  <stem>.fx_nodes.json            (--fx-nodes models) every call_function node's output,
                                  by FX node name, from torch.fx.Interpreter on the exported
                                  graph module, for the first label's inputs
  manifest.json                   {"torch", "models": [{"stem", "inputs", "outputs",
                                  "dynamic", "labels", "targets", "decomposed"}]}
Models torch.export cannot export are listed in the manifest's "failed" with the reason.
"""
import argparse
import json
import math
import os
import sys
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "zoo"))
sys.dont_write_bytecode = True

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402
import plain_zoo_models as pzm  # noqa: E402

Dim = torch.export.Dim


# ---- small models for the committed fixtures ----------------------------------------------

class TinyCnn(nn.Module):
    """conv + batch norm + relu, a residual block, max and adaptive pooling, a linear head."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8),
                                  nn.ReLU(inplace=True), nn.MaxPool2d(2))
        self.block = nn.Sequential(nn.Conv2d(8, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                                   nn.Conv2d(8, 8, 3, padding=1), nn.BatchNorm2d(8))
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(8, 10)

    def forward(self, x):
        y = self.stem(x)
        y = torch.relu(self.block(y) + y)
        return self.fc(torch.flatten(self.pool(y), 1))


class TinyBert(pzm.HfBert):
    VOCAB, D_MODEL, N_HEADS, D_FF, N_LAYERS, MAX_POS = 100, 32, 2, 64, 2, 64


class TinyLlama(pzm.LlamaLike):
    VOCAB, D_MODEL, N_HEADS, N_KV_HEADS, D_FF, N_LAYERS = 100, 32, 4, 2, 64, 2


class SdpaEncoder(nn.Module):
    """nn.TransformerEncoder (batch_first) over token ids with a padding mask: in torch 2
    it exports as linear + scaled_dot_product_attention + layer_norm."""

    def __init__(self, vocab=100, d=32):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        layer = nn.TransformerEncoderLayer(d, 4, 64, dropout=0.0, batch_first=True,
                                           activation="gelu")
        self.encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.head = nn.Linear(d, 5)

    def forward(self, ids, mask):
        h = self.encoder(self.emb(ids), src_key_padding_mask=mask == 0)
        return self.head(h)


class SliceWrites(nn.Module):
    """In-place writes the training IR keeps: a mask filled through slice and select views
    (as torchvision's swin builds its attention mask), and an in-place eval dropout on a
    view (as efficientnet's classifier)."""

    def forward(self, x):  # x: [B, 4, 6]
        mask = x.new_zeros((x.size(1), x.size(2)))
        mask[0:2, 1:3] = 1.0
        mask[3] = 2.0
        row = mask[1]
        row[4:] = -1.0  # through a select, then a slice
        y = torch.relu_(x + mask)
        flat = torch.flatten(y, 1)
        return F.dropout(flat, 0.2, training=False, inplace=True) * 2.0


class TinyLstm(pzm.LstmTagger):
    FEATURES, HIDDEN, NUM_CLASSES = 8, 16, 4


class TinyGru(pzm.GruSeq):
    FEATURES, HIDDEN, LAYERS = 8, 12, 2


def calibrate_batchnorm(model, make_input, seed):
    g = torch.Generator().manual_seed(seed)
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            nn.init.uniform_(m.weight, 0.5, 1.5, generator=g)
            nn.init.uniform_(m.bias, -0.2, 0.2, generator=g)
    model.train()
    with torch.no_grad():
        for _ in range(3):
            model(*make_input(g))
    model.eval()


# ---- specs ---------------------------------------------------------------------------------

def image(channels, size):
    def make(g, shape):
        return (torch.randn(shape["batch"], channels, size, size, generator=g),)
    return make


def ids_only(vocab):
    def make(g, shape):
        return (torch.randint(1, vocab, (shape["batch"], shape["seq"]), generator=g),)
    return make


def bert_inputs(vocab):
    def make(g, shape):
        b, s = shape["batch"], shape["seq"]
        ids = torch.randint(1, vocab, (b, s), generator=g)
        types = torch.randint(0, 2, (b, s), generator=g)
        mask = torch.ones(b, s, dtype=torch.int64)
        mask[0, s // 2:] = 0  # the first row padded: the mask changes the result
        return ids, types, mask
    return make


def ids_mask(vocab):
    def make(g, shape):
        b, s = shape["batch"], shape["seq"]
        ids = torch.randint(1, vocab, (b, s), generator=g)
        mask = torch.ones(b, s, dtype=torch.int64)
        mask[-1, s - 2:] = 0
        return ids, mask
    return make


def features(n, batch_first=True):
    def make(g, shape):
        b, s = shape["batch"], shape["seq"]
        return (torch.randn(b, s, n, generator=g) if batch_first else torch.randn(s, b, n, generator=g),)
    return make


def gru_inputs(n, layers, hidden):
    def make(g, shape):
        b, s = shape["batch"], shape["seq"]
        return torch.randn(s, b, n, generator=g), torch.randn(layers, b, hidden, generator=g)
    return make


class Spec:
    """A model to export: `build()` makes it, `inputs(g, shape)` its inputs at a shape,
    `dims` the dynamic dims per input ({input index: {dim: dim name}})."""

    def __init__(self, stem, build, inputs, dims, example, labels, decompose=False, fx_nodes=False,
                 bn_input=None):
        self.stem, self.build, self.inputs, self.dims = stem, build, inputs, dims
        self.example, self.labels, self.decompose, self.fx_nodes = example, labels, decompose, fx_nodes
        self.bn_input = bn_input


B = {"batch": 2}
SEQ_LABELS = {"b3_s7": {"batch": 3, "seq": 7}, "b1_s29": {"batch": 1, "seq": 29}}
IMG_LABELS = {"b3": {"batch": 3}, "b5": {"batch": 5}}
SEQ_EXAMPLE = {"batch": 2, "seq": 16}


def ci_specs():
    return [
        Spec("cnn", TinyCnn, image(3, 16), {0: {0: "batch"}}, B, IMG_LABELS, fx_nodes=True,
             bn_input=image(3, 16)),
        Spec("cnn_core", TinyCnn, image(3, 16), {0: {0: "batch"}}, B, IMG_LABELS, decompose=True,
             bn_input=image(3, 16)),
        Spec("bert", TinyBert, bert_inputs(100), {i: {0: "batch", 1: "seq"} for i in range(3)},
             SEQ_EXAMPLE, SEQ_LABELS, fx_nodes=True),
        Spec("llama", TinyLlama, ids_only(100), {0: {0: "batch", 1: "seq"}}, SEQ_EXAMPLE, SEQ_LABELS),
        Spec("sdpa_encoder", SdpaEncoder, ids_mask(100), {0: {0: "batch", 1: "seq"}, 1: {0: "batch", 1: "seq"}},
             SEQ_EXAMPLE, SEQ_LABELS),
        Spec("writes", SliceWrites, lambda g, s: (torch.randn(s["batch"], 4, 6, generator=g),), {0: {0: "batch"}},
             B, IMG_LABELS),
        Spec("lstm", TinyLstm, features(8), {0: {0: "batch", 1: "seq"}}, SEQ_EXAMPLE, SEQ_LABELS),
        Spec("gru", TinyGru, gru_inputs(8, 2, 12), {0: {1: "batch", 0: "seq"}, 1: {1: "batch"}},
             SEQ_EXAMPLE, SEQ_LABELS),
    ]


def torchvision_spec(name, size=64, fx_nodes=False, **kwargs):
    import torchvision

    def build():
        return getattr(torchvision.models, name)(weights=None, **kwargs)
    return Spec(name, build, image(3, size), {0: {0: "batch"}}, B, {"b3": {"batch": 3}, "b1": {"batch": 1}},
                bn_input=image(3, size), fx_nodes=fx_nodes)


def zoo_specs():
    return [
        torchvision_spec("resnet18", fx_nodes=True), torchvision_spec("resnet50"), torchvision_spec("mobilenet_v3_small"),
        torchvision_spec("efficientnet_b0"), torchvision_spec("convnext_tiny"), torchvision_spec("densenet121"),
        torchvision_spec("shufflenet_v2_x1_0"), torchvision_spec("regnet_y_400mf"),
        torchvision_spec("googlenet", aux_logits=False, init_weights=True),
        torchvision_spec("vit_b_16", size=64, image_size=64), torchvision_spec("swin_t", size=64),
        Spec("hf_bert", pzm.HfBert, bert_inputs(pzm.HfBert.VOCAB), {i: {0: "batch", 1: "seq"} for i in range(3)},
             SEQ_EXAMPLE, SEQ_LABELS, fx_nodes=True),
        Spec("llama_like", pzm.LlamaLike, ids_only(pzm.LlamaLike.VOCAB), {0: {0: "batch", 1: "seq"}},
             SEQ_EXAMPLE, SEQ_LABELS),
        Spec("lstm_tagger", pzm.LstmTagger, features(pzm.LstmTagger.FEATURES), {0: {0: "batch", 1: "seq"}},
             SEQ_EXAMPLE, SEQ_LABELS),
        Spec("gru_seq", pzm.GruSeq, gru_inputs(pzm.GruSeq.FEATURES, pzm.GruSeq.LAYERS, pzm.GruSeq.HIDDEN),
             {0: {1: "batch", 0: "seq"}, 1: {1: "batch"}}, SEQ_EXAMPLE, SEQ_LABELS),
        Spec("seq2seq_transformer", pzm.Seq2SeqTransformer,
             lambda g, s: (torch.randint(1, 500, (s["batch"], s["seq"]), generator=g),
                           torch.randint(1, 500, (s["batch"], max(2, s["seq"] - 3)), generator=g)),
             {0: {0: "batch", 1: "seq"}, 1: {0: "batch", 1: "tgt"}}, SEQ_EXAMPLE, SEQ_LABELS),
    ]


# ---- writing -------------------------------------------------------------------------------

DTYPES = {torch.float32: "float32", torch.float64: "float64", torch.int64: "int64", torch.int32: "int32",
          torch.bool: "bool", torch.float16: "float16", torch.bfloat16: "bfloat16"}


class Floats(list):
    """Float data, written with float32's 9 significant digits (exact, and half the size)."""


def tensor_json(t):
    t = t.detach().contiguous()
    if t.is_floating_point():
        data = Floats(t.to(torch.float64).flatten().tolist())
    else:
        data = t.to(torch.int64).flatten().tolist()
    return {"dtype": DTYPES[t.dtype], "shape": list(t.shape), "data": data}


def dumps(obj):
    if isinstance(obj, Floats):
        return "[" + ",".join(repr(v) if not math.isfinite(v) else "%.9g" % v for v in obj) + "]"
    if isinstance(obj, dict):
        return "{" + ",".join(json.dumps(k) + ":" + dumps(v) for k, v in obj.items()) + "}"
    if isinstance(obj, (list, tuple)):
        return "[" + ",".join(dumps(v) for v in obj) + "]"
    return json.dumps(obj)


def write_json(path, obj):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(dumps(obj))
    os.replace(tmp, path)


def as_tuple(x):
    if isinstance(x, torch.Tensor):
        return (x,)
    out = []
    for e in x:
        out.extend(as_tuple(e))
    return tuple(out)


def dynamic_shapes(spec, names, dims):
    shapes = []
    for i in range(len(names)):
        shapes.append({d: dims[n] for d, n in spec.dims.get(i, {}).items() if dims[n] is not None})
    return tuple(shapes)


def fx_node_outputs(ep, inputs):
    """Every call_function node's output of the exported graph module, by FX node name."""
    gm = ep.graph_module
    state = dict(ep.state_dict)
    state.update(ep.constants)
    flat = []
    sig = ep.graph_signature
    for spec in sig.input_specs:
        flat.append(state[spec.target] if spec.target is not None else None)
    user = iter(inputs)
    flat = [next(user) if v is None else v for v in flat]
    seen = {}

    class Recorder(torch.fx.Interpreter):
        def run_node(self, n):
            out = super().run_node(n)
            if n.op == "call_function":  # a copy: a later in-place op (relu_) must not change it
                seen[n.name] = out.clone() if isinstance(out, torch.Tensor) else out
            return out

    with torch.no_grad():
        Recorder(gm).run(*flat)
    records = {}
    for name, out in seen.items():
        if isinstance(out, torch.Tensor):
            records[name] = tensor_json(out)
        elif isinstance(out, (tuple, list)) and all(isinstance(o, torch.Tensor) for o in out):
            records[name] = [tensor_json(o) for o in out]
    return records


def export_one(spec, out_dir):
    torch.manual_seed(0)
    model = spec.build().eval()
    if spec.bn_input is not None:
        calibrate_batchnorm(model, lambda g: spec.bn_input(g, {"batch": 4}), 1)
    g = torch.Generator().manual_seed(1)
    example = spec.inputs(g, spec.example)
    import inspect
    names = [p for p in inspect.signature(model.forward).parameters][: len(example)]
    all_dims = {n for d in spec.dims.values() for n in d.values()}
    dims = {n: Dim(n, min=1, max=64) for n in all_dims}
    if "batch" in dims:
        dims["batch"] = Dim("batch", min=1, max=64)
    # Not under no_grad: in eval mode nn.TransformerEncoderLayer would take its fused fast
    # path, which torch.export cannot export.
    static = {}
    while True:
        try:
            ep = torch.export.export(model, example, dynamic_shapes=dynamic_shapes(spec, names, dims))
            break
        except Exception as e:  # a dim torch.export specializes: export it static, and say so
            text = str(e)
            first = text.splitlines()[0] if text else ""
            hit = [n for n in dims if n not in static and f"Constraints violated ({n})" in first]
            if not hit:
                raise
            reason = next((ln.strip(" -") for ln in text.splitlines()[1:] if ln.strip()), first)
            static[hit[0]] = reason
            dims[hit[0]] = None
    if spec.decompose:
        ep = ep.run_decompositions()
    path = os.path.join(out_dir, spec.stem + ".pt2")
    torch.export.save(ep, path)
    loaded = torch.export.load(path)
    entry = {"stem": spec.stem, "file": spec.stem + ".pt2", "inputs": names, "labels": [],
             "dynamic": {names[i]: {str(d): n for d, n in dd.items()} for i, dd in spec.dims.items()},
             "decomposed": spec.decompose, "static_dims": static,
             "targets": sorted({str(n.target) for n in ep.graph.nodes if n.op == "call_function"})}
    for label, shape in spec.labels.items():
        if static:  # torch fixed these dims at the example's size
            shape = dict(shape, **{n: spec.example[n] for n in static})
            label = "_".join(f"{n[0]}{shape[n]}" for n in shape)
        g = torch.Generator().manual_seed(hash(label) % 1000 + 7)
        inputs = spec.inputs(g, shape)
        with torch.no_grad():
            expected = as_tuple(model(*inputs))
            again = as_tuple(loaded.module()(*inputs))
        for a, b in zip(expected, again):  # torch's own round trip must hold
            diff = (a - b).abs().max().item() if a.numel() else 0.0
            if diff > 1e-4 * max(1.0, a.abs().max().item()):
                raise RuntimeError(f"{spec.stem} {label}: torch.export.load differs from eager by {diff}")
        out_names = list(ep.graph_signature.user_outputs)  # the program's own output names
        if len(out_names) != len(expected):
            out_names = [f"output{i}" for i in range(len(expected))]
        write_json(os.path.join(out_dir, f"{spec.stem}.{label}.inputs.json"),
                   {n: tensor_json(t) for n, t in zip(names, inputs)})
        write_json(os.path.join(out_dir, f"{spec.stem}.{label}.expected.json"),
                   {n: tensor_json(t) for n, t in zip(out_names, expected)})
        entry["labels"].append({"label": label, "shape": shape,
                                "inputs": f"{spec.stem}.{label}.inputs.json",
                                "expected": f"{spec.stem}.{label}.expected.json",
                                "max_abs_ref": max(float(t.abs().max()) for t in expected if t.numel())})
        if spec.fx_nodes and len(entry["labels"]) == 1:
            write_json(os.path.join(out_dir, f"{spec.stem}.fx_nodes.json"), fx_node_outputs(ep, inputs))
            entry["fx_nodes"] = f"{spec.stem}.fx_nodes.json"
    entry["outputs"] = out_names
    return entry


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out_dir")
    ap.add_argument("--set", choices=["ci", "zoo"], default="ci")
    ap.add_argument("--models", default="", help="comma-separated stems (default: all of the set)")
    ap.add_argument("--list", action="store_true", help="list the set's stems and exit")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    warnings.filterwarnings("ignore")  # torch.export's advice about LSTM weights and the like
    specs = ci_specs() if args.set == "ci" else zoo_specs()
    if args.list:
        print("\n".join(s.stem for s in specs))
        return 0
    if args.models:
        wanted = set(args.models.split(","))
        unknown = wanted - {s.stem for s in specs}
        if unknown:
            ap.error(f"unknown models: {', '.join(sorted(unknown))}")
        specs = [s for s in specs if s.stem in wanted]
    os.makedirs(args.out_dir, exist_ok=True)
    manifest = {"format": "switchyard-pt2-fixtures", "torch": torch.__version__.split("+")[0],
                "models": [], "failed": []}
    old = os.path.join(args.out_dir, "manifest.json")
    if args.models and os.path.exists(old):  # a partial run keeps the other models' entries
        with open(old) as f:
            kept = json.load(f)
        if kept.get("torch") == manifest["torch"]:
            redo = {s.stem for s in specs}
            manifest["models"] = [m for m in kept["models"] if m["stem"] not in redo]
            manifest["failed"] = [m for m in kept["failed"] if m["stem"] not in redo]
    for i, spec in enumerate(specs):
        t0 = time.time()
        print(f"[{i + 1}/{len(specs)}] {spec.stem} ...", end=" ", flush=True)
        try:
            manifest["models"].append(export_one(spec, args.out_dir))
            print(f"{time.time() - t0:.1f} s", flush=True)
        except Exception as e:  # a model torch.export cannot export is reported, not fatal
            reason = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
            manifest["failed"].append({"stem": spec.stem, "reason": reason})
            print(f"FAILED ({reason})", flush=True)
    write_json(os.path.join(args.out_dir, "manifest.json"), manifest)
    with open(os.path.join(args.out_dir, "manifest.json")) as f:  # pretty for review
        pretty = json.dumps(json.load(f), indent=1)
    with open(os.path.join(args.out_dir, "manifest.json"), "w") as f:
        f.write(pretty + "\n")
    print(f"wrote {len(manifest['models'])} models to {args.out_dir}"
          + (f"; {len(manifest['failed'])} failed" if manifest["failed"] else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
