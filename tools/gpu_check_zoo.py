#!/usr/bin/env python3
"""Helpers for tools/gpu_check.sh: the model zoo's tensors on their way to a GPU machine,
the parity check there, and PyTorch's own eager CUDA timing for the benchmark.

  export-tensors ZOO_DIR OUT_DIR --models a,b [--batches 1,4]
      Here (Debian's /usr/bin/python3 with torch 1.13): each model's inputs and PyTorch's CPU
      outputs (zoo/<m>.b<B>.{inputs,expected}.pt) into OUT_DIR/<m>.b<B>.npz (numpy arrays
      in_0.., out_0..), and OUT_DIR/models.json listing what was written.
  to-json NPZ GRAPH OUT_JSON
      There (numpy only): the inputs of NPZ as switchyard's JSON tensor file, named after
      GRAPH's inputs (switchyard without LibTorch reads no .pt files).
  compare OUT_JSON NPZ GRAPH
      There: switchyard's outputs against the CPU reference; passes when every output has
      max|got - ref| <= 1e-4 * max(1, max|ref|). Prints one JSON line with the numbers.
  plan-count PLAN_TXT
      Prints how many of the graph's nodes `switchyard plan` put on the cuda plugin, and of how many.
  torch-bench MODEL NPZ [--repeat N]
      There (python3 with torch and CUDA): the same architecture in eager PyTorch on the GPU
      (torchvision or tools/zoo/zoo_models.py, random weights: the time does not depend on them),
      TF32 off as in switchyard's float32; prints one JSON line of median milliseconds with
      and without the host <-> device copies of inputs and outputs.
"""
import argparse
import json
import os
import statistics
import sys
import time

TOLERANCE = 1e-4


def load_npz(path):
    import numpy as np

    with np.load(path) as z:
        ins = [z[f"in_{i}"] for i in range(sum(1 for k in z.files if k.startswith("in_")))]
        outs = [z[f"out_{i}"] for i in range(sum(1 for k in z.files if k.startswith("out_")))]
    return ins, outs


def graph_names(graph_path, key):
    with open(graph_path) as f:
        g = json.load(f)
    names = []
    for entry in g[key]:
        names.append(entry["name"] if isinstance(entry, dict) else entry)
    return names


def cmd_export_tensors(args):
    import numpy as np
    import torch

    os.makedirs(args.out_dir, exist_ok=True)
    written = []
    for model in args.models.split(","):
        for batch in args.batches.split(","):
            stem = f"{model}.b{batch}"
            ins = torch.load(os.path.join(args.zoo_dir, f"{stem}.inputs.pt"))
            outs = torch.load(os.path.join(args.zoo_dir, f"{stem}.expected.pt"))
            ins = list(ins) if isinstance(ins, (tuple, list)) else [ins]
            outs = list(outs) if isinstance(outs, (tuple, list)) else [outs]
            arrays = {f"in_{i}": t.detach().contiguous().numpy() for i, t in enumerate(ins)}
            arrays.update({f"out_{i}": t.detach().contiguous().numpy() for i, t in enumerate(outs)})
            np.savez(os.path.join(args.out_dir, f"{stem}.npz"), **arrays)
            written.append({"model": model, "batch": int(batch), "npz": f"{stem}.npz",
                            "inputs": [list(a.shape) for a in arrays.values()][: len(ins)]})
    with open(os.path.join(args.out_dir, "models.json"), "w") as f:
        json.dump(written, f, indent=1)
    print(f"wrote {len(written)} tensor files to {args.out_dir}")


DTYPE_NAMES = {"float32": "float32", "float64": "float64", "int64": "int64", "int32": "int32", "bool": "bool"}


def cmd_to_json(args):
    ins, _ = load_npz(args.npz)
    names = graph_names(args.graph, "inputs")
    if len(names) != len(ins):
        sys.exit(f"{args.npz}: {len(ins)} inputs, but {args.graph} has {len(names)}")
    doc = {}
    for name, a in zip(names, ins):
        dtype = DTYPE_NAMES.get(str(a.dtype))
        if dtype is None:
            sys.exit(f"{args.npz}: input '{name}' has dtype {a.dtype}, which switchyard's JSON files do not take")
        doc[name] = {"dtype": dtype, "shape": list(a.shape), "data": a.reshape(-1).tolist()}
    with open(args.out_json, "w") as f:
        json.dump(doc, f)


def cmd_compare(args):
    import numpy as np

    _, refs = load_npz(args.npz)
    with open(args.out_json) as f:
        got = json.load(f)
    names = graph_names(args.graph, "outputs")
    result = {"npz": os.path.basename(args.npz), "outputs": [], "pass": True}
    if len(names) != len(refs):
        result["pass"] = False
        result["error"] = f"{len(refs)} reference outputs, graph has {len(names)}"
    for name, ref in zip(names, refs):
        entry = got.get(name)
        if entry is None:
            result["pass"] = False
            result["outputs"].append({"name": name, "error": "missing from the outputs file"})
            continue
        g = np.asarray(entry["data"], dtype=np.float64).reshape(entry["shape"])
        r = ref.astype(np.float64)
        if list(g.shape) != list(r.shape):
            result["pass"] = False
            result["outputs"].append({"name": name, "error": f"shape {list(g.shape)} != reference {list(r.shape)}"})
            continue
        finite = np.isfinite(r)
        scale = max(1.0, float(np.abs(r[finite]).max()) if finite.any() else 1.0)
        # Where the reference is NaN the result must be NaN; where it is infinite, equal.
        nonfinite_ok = bool(np.all(np.isnan(g[np.isnan(r)]))) and bool(np.all(g[np.isinf(r)] == r[np.isinf(r)]))
        diff = float(np.abs(g[finite] - r[finite]).max()) if finite.any() else 0.0  # NaN where g is not finite
        ok = diff <= TOLERANCE * scale and nonfinite_ok
        result["pass"] = result["pass"] and ok
        result["outputs"].append({"name": name, "max_abs_diff": diff, "max_abs_ref": scale,
                                  "tolerance": TOLERANCE * scale, "pass": ok})
    print(json.dumps(result))
    summary = "; ".join(f"{o['name']}: " + (o["error"] if "error" in o else
                                            f"max|diff| {o['max_abs_diff']:.2e}, tolerance {o['tolerance']:.2e}")
                        for o in result["outputs"])
    print(f"{result['npz']}: {'PASS' if result['pass'] else 'FAIL'} ({summary})", file=sys.stderr)
    sys.exit(0 if result["pass"] else 1)


def cmd_plan_count(args):
    """Prints '<nodes on cuda> <nodes>' from the 'nodes per backend:' line of `switchyard plan`."""
    counts = {}
    for line in open(args.plan):
        if line.startswith("nodes per backend:"):
            counts = {k: int(v) for k, v in (item.split("=") for item in line.split(":", 1)[1].split())}
    print(counts.get("cuda", 0), sum(counts.values()))


def eager_model(name):
    import torch
    import torchvision

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "zoo"))
    torch.manual_seed(0)
    base = name.replace("_fast", "").replace("_decomposed", "")
    if base in ("resnet18", "resnet50", "mobilenet_v3_small", "vit_b_16"):
        return getattr(torchvision.models, base)(weights=None)
    import zoo_models

    return {"bert": zoo_models.BertLike, "gpt": zoo_models.GptLike}[base]()


def cmd_torch_bench(args):
    import torch

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    ins, _ = load_npz(args.npz)
    model = eager_model(args.model).eval().cuda()
    host = [torch.from_numpy(a) for a in ins]
    dev = [t.cuda() for t in host]

    def timed(fn):
        with torch.no_grad():
            for _ in range(3):
                fn()
            torch.cuda.synchronize()
            times = []
            for _ in range(args.repeat):
                t0 = time.perf_counter()
                fn()
                torch.cuda.synchronize()
                times.append((time.perf_counter() - t0) * 1e3)
        return statistics.median(times)

    def with_copies():
        out = model(*[t.cuda() for t in host])
        return [o.cpu() for o in (out if isinstance(out, (tuple, list)) else [out])]

    print(json.dumps({"model": args.model, "torch": torch.__version__, "device": torch.cuda.get_device_name(0),
                      "median_ms_with_copies": timed(with_copies),
                      "median_ms_on_device": timed(lambda: model(*dev))}))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    e = sub.add_parser("export-tensors")
    e.add_argument("zoo_dir")
    e.add_argument("out_dir")
    e.add_argument("--models", required=True)
    e.add_argument("--batches", default="1,4")
    j = sub.add_parser("to-json")
    j.add_argument("npz")
    j.add_argument("graph")
    j.add_argument("out_json")
    c = sub.add_parser("compare")
    c.add_argument("out_json")
    c.add_argument("npz")
    c.add_argument("graph")
    pc = sub.add_parser("plan-count")
    pc.add_argument("plan")
    b = sub.add_parser("torch-bench")
    b.add_argument("model")
    b.add_argument("npz")
    b.add_argument("--repeat", type=int, default=20)
    args = p.parse_args()
    {"export-tensors": cmd_export_tensors, "to-json": cmd_to_json, "compare": cmd_compare,
     "torch-bench": cmd_torch_bench, "plan-count": cmd_plan_count}[args.cmd](args)


if __name__ == "__main__":
    main()
