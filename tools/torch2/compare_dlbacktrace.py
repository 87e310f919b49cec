"""switchyard beside the DLBacktrace engine: the same torch.export program, the same input,
node_io from both, compared key by key and value by value, and the time of each.

    tools/torch2/setup_venv.sh --dlbacktrace          # once: torch 2.6 + dl-backtrace 0.1.24
    PY=$(tools/torch2/find_python.sh 2.6.0)
    $PY tools/torch2/compare_dlbacktrace.py [--models resnet18,bert] [--out build/dlbacktrace]
        [--switchyard build/bin/switchyard] [--config configs/default.toml]
        [--rounds 3] [--repeat 10] [--warmup 2] [--size 224] [--tol 1e-4] [--markdown]

Per model:
  1. the model (random weights from a fixed seed, eval) and a fixed batch-1 input:
     resnet18 is torchvision's at --size (224), bert is tools/zoo/plain_zoo_models.py's HfBert
     (2 layers, d_model 128) over 16 tokens with the last 4 padded;
  2. DLBacktrace(model, inputs, device="cpu") as its README shows (it exports the model
     itself and partly decomposes it, and sets torch to 1 thread), then predict(*inputs)
     once untimed: its node_io, keyed by FX node name;
  3. torch.export.save(dlb.exported_program, OUT/<model>.pt2) and the input as
     OUT/<model>.inputs.pt (torch.save of a tuple), so switchyard runs the very program
     DLBacktrace ran;
  4. `switchyard run OUT/<model>.pt2 --inputs OUT/<model>.inputs.pt --config
     OUT/one_thread.toml --node-io all --save-node-io OUT/<model>.switchyard_io.pt
     --repeat R --warmup W`, where one_thread.toml is --config with [runtime]
     intra_op_threads = 1 and inter_op_threads = 1 (DLBacktrace sets torch to 1 thread on
     the CPU). Its 'median_ms' is one forward inside the process with node_io "all" (every
     node's inputs and outputs kept, as DLBacktrace keeps them); the CLI's wall time
     (loading, planning, the runs, writing node_io) is reported beside it;
  5. --rounds rounds (3), each --repeat (10) timed predicts then step 4's command, so
     that a changing load on a shared machine weighs on both alike;
  6. both node_io dicts compared (the last of each).

How the keys line up. DLBacktrace records every FX node: placeholders (parameters,
buffers, user inputs), call_function nodes, getitem nodes and the output node.
switchyard records the call_function nodes it runs. A multi-output op
(`_native_batch_norm_legit_no_training`) is one switchyard node under the op's FX name whose
outputs are the pieces used (torch 2.6's serialized program names them after the getitem
nodes, `getitem`, `getitem_3`, ...); so each DLBacktrace getitem entry is compared with
the producing node's output at the getitem's index. Values: per node, max |a - b| over its
outputs (and, separately, over its tensor inputs), divided by max(1, max |DLBacktrace's|);
a node passes under --tol (1e-4). Inputs: DLBacktrace records only some of a node's input
tensors (a conv's or linear's activation, not its weight, which it keeps apart); each is
paired with switchyard's next input of the same shape, in argument order, and compared.

Writes OUT/compare.json (every number) and prints a table (--markdown: as
docs/benchmarks.md writes it). Exit status 1 when a value is over --tol, a key is missing
that should not be, or switchyard fails (its error is printed: node, op, message).
"""
import argparse
import json
import operator
import os
import re
import statistics
import subprocess
import sys
import time
import types

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "zoo"))
sys.dont_write_bytecode = True

# dl-backtrace 0.1.24 imports three prebuilt CUDA extensions at import time; they do not load
# with PyPI's torch 2.6 (an undefined c10 symbol). The CPU path never calls them.
CUDA_EXTENSIONS = ("wt_fc_v3_ops", "wt_selfattention_v3_ops", "wt_embedding_v2_ops")

import torch  # noqa: E402

MODELS = ("resnet18", "bert")


def build(name, size):
    """The model (eval, random weights from a fixed seed) and its fixed batch-1 input."""
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(1234)
    if name == "resnet18":
        import torchvision
        model = torchvision.models.resnet18(weights=None).eval()
        return model, (torch.randn(1, 3, size, size, generator=g),)
    if name == "bert":
        import plain_zoo_models as pzm
        model = pzm.HfBert().eval()
        seq = 16
        ids = torch.randint(1, pzm.HfBert.VOCAB, (1, seq), generator=g)
        types_ = torch.randint(0, 2, (1, seq), generator=g)
        mask = torch.ones(1, seq, dtype=torch.int64)
        mask[0, seq - 4:] = 0  # padded: the mask changes the result
        return model, (ids, types_, mask)
    raise SystemExit(f"compare_dlbacktrace: unknown model '{name}' (known: {', '.join(MODELS)})")


def import_dlbacktrace():
    for name in CUDA_EXTENSIONS:
        sys.modules.setdefault(name, types.ModuleType(name))
    try:
        from dl_backtrace.pytorch_backtrace import DLBacktrace
        import dl_backtrace
    except ImportError as e:
        raise SystemExit(f"compare_dlbacktrace: cannot import dl_backtrace in {sys.executable} ({e}); "
                         "install it with tools/torch2/setup_venv.sh --dlbacktrace")
    return DLBacktrace, dl_backtrace.__version__


def quiet_dlbacktrace():
    """Its engine logs two INFO lines per predict to stderr (configured at its first
    predict); the timed calls run without them."""
    import logging
    logging.getLogger("dlbacktrace.execution_engine").setLevel(logging.WARNING)


def one_thread_config(src, dst):
    """--config with [runtime] intra_op_threads = 1 and inter_op_threads = 1."""
    text = open(src).read()
    if re.search(r"(?m)^\s*paths\s*=\s*\[\s*\"[^/\"]", text):
        print(f"compare_dlbacktrace: note: {src} has relative [plugins] paths; the copy in "
              f"{os.path.dirname(dst)} resolves them there", file=sys.stderr)
    for key in ("intra_op_threads", "inter_op_threads"):
        if re.search(rf"(?m)^\s*{key}\s*=", text):
            text = re.sub(rf"(?m)^(\s*){key}\s*=.*$", rf"\g<1>{key} = 1", text)
        elif re.search(r"(?m)^\[runtime\]\s*$", text):
            text = re.sub(r"(?m)^\[runtime\]\s*$", f"[runtime]\n{key} = 1", text, count=1)
        else:
            text += f"\n[runtime]\n{key} = 1\n"
    with open(dst, "w") as f:
        f.write(text)


def tensors(v):
    """A node_io value as a list (a tensor, a list/tuple of tensors, or other things)."""
    if isinstance(v, (list, tuple)):
        return list(v)
    return [v]


def rel_err(ref, got):
    """max |ref - got| / max(1, max |ref|), or a string saying why the two do not compare."""
    if not isinstance(ref, torch.Tensor) or not isinstance(got, torch.Tensor):
        return None
    if tuple(ref.shape) != tuple(got.shape):
        return f"shape {list(ref.shape)} vs {list(got.shape)}"
    if ref.numel() == 0:
        return 0.0
    a, b = ref.detach().to(torch.float64), got.detach().to(torch.float64)
    return float((a - b).abs().max()) / max(1.0, float(a.abs().max()))


def worst(errs):
    """The largest float of a list of (key, err) pairs, ignoring None; strings are failures."""
    nums = [(e, k) for k, e in errs if isinstance(e, float)]
    return max(nums) if nums else (0.0, "")


def time_predict(dlb, inputs, repeat):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        io = dlb.predict(*inputs)
        times.append((time.perf_counter() - t0) * 1e3)
    return io, times


def run_switchyard(args, pt2, inputs_pt, config, io_pt):
    cmd = [args.switchyard, "--config", config, "--log-level", "warn", "run", pt2, "--inputs", inputs_pt,
           "--node-io", "all", "--save-node-io", io_pt, "--no-table", "--show", "4",
           "--repeat", str(args.repeat), "--warmup", str(args.warmup)]
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    def shown(c):
        a = os.path.abspath(c)
        return os.path.relpath(a, ROOT) if os.path.exists(a) and a.startswith(ROOT + os.sep) else c
    out = {"command": " ".join(shown(c) for c in cmd),
           "rc": p.returncode, "wall_s": wall, "stdout": p.stdout, "stderr": p.stderr}
    m = re.search(r"median_ms: ([0-9.]+)", p.stdout)
    out["median_ms"] = float(m.group(1)) if m else None
    m = re.search(r"min_ms: ([0-9.]+) max_ms: ([0-9.]+)", p.stdout)
    out["min_ms"], out["max_ms"] = (float(m.group(1)), float(m.group(2))) if m else (None, None)
    return out


def match_inputs(dlb_rec, sy_rec):
    """DLBacktrace's recorded input tensors paired with switchyard's. Both follow the FX
    node's arguments in order, but DLBacktrace keeps only some (a conv's or linear's
    activation, not its weight, which it holds apart): each of its tensors pairs with
    switchyard's next input tensor of the same shape. Returns the pairs and how many of
    DLBacktrace's tensors found none."""
    values = [v for v in tensors(dlb_rec["input_values"]) if isinstance(v, torch.Tensor)]
    sy_src, sy_in = list(sy_rec["input_sources"]), list(sy_rec["inputs"])
    pairs, j = [], 0
    for ref in values:
        k = next((k for k in range(j, len(sy_in)) if isinstance(sy_in[k], torch.Tensor)
                  and tuple(sy_in[k].shape) == tuple(ref.shape)), None)
        if k is None:
            continue
        pairs.append((sy_src[k] if k < len(sy_src) else str(k), ref, sy_in[k]))
        j = k + 1
    return pairs, len(values) - len(pairs)


def compare(ep, dlb_io, sy_io, tol):
    """Keys in both / only in one, and the values of every common key and getitem."""
    fx = {n.name: n for n in ep.graph.nodes}
    getitems = {n.name: n for n in ep.graph.nodes
                if n.op == "call_function" and n.target is operator.getitem}
    dlb_keys, sy_keys = set(dlb_io), set(sy_io)
    common = dlb_keys & sy_keys
    only_dlb = dlb_keys - sy_keys
    only_sy = sorted(sy_keys - dlb_keys)

    kinds = {"placeholder": [], "output": [], "getitem": [], "call_function": [], "not in the program": []}
    for k in sorted(only_dlb):
        n = fx.get(k)
        if n is None:
            kinds["not in the program"].append(k)
        elif k in getitems:
            kinds["getitem"].append(k)
        else:
            kinds[n.op if n.op in kinds else "call_function"].append(k)

    out_errs, in_errs, failures, dropped = [], [], [], []
    inputs_unmatched = 0
    for k in sorted(common):
        ref_out = tensors(dlb_io[k]["output_values"])
        got_out = list(sy_io[k]["outputs"])
        for i, got in enumerate(got_out):
            e = rel_err(ref_out[i], got) if i < len(ref_out) else "no DLBacktrace value"
            out_errs.append((f"{k}[{i}]", e))
        # DLBacktrace keeps every output of a multi-output op (batch norm's two empty
        # statistics); switchyard the ones the program reads.
        for i in range(len(got_out), len(ref_out)):
            dropped.append(f"{k}[{i}]")
        pairs, unmatched = match_inputs(dlb_io[k], sy_io[k])
        inputs_unmatched += unmatched
        for src, ref, got in pairs:
            in_errs.append((f"{k} input {src}", rel_err(ref, got)))

    getitem_checked, getitem_missing = 0, []
    for k in kinds["getitem"]:
        n = getitems[k]
        src, idx = n.args[0].name, n.args[1]
        if src not in sy_io or idx >= len(sy_io[src]["outputs"]):
            getitem_missing.append(f"{k} = {src}[{idx}]")
            continue
        e = rel_err(tensors(dlb_io[k]["output_values"])[0], sy_io[src]["outputs"][idx])
        out_errs.append((f"{k} = {src}[{idx}]", e))
        getitem_checked += 1

    for key, e in out_errs + in_errs:
        if isinstance(e, str) or (isinstance(e, float) and e > tol):
            failures.append((key, e))

    call_functions = [n for n in ep.graph.nodes if n.op == "call_function"]
    max_out, worst_out = worst(out_errs)
    max_in, worst_in = worst(in_errs)
    return {
        "fx_call_function": len(call_functions),
        "fx_getitem": len(getitems),
        "dlb_keys": len(dlb_keys), "switchyard_keys": len(sy_keys), "common": len(common),
        "only_dlb": {k: v for k, v in kinds.items() if v}, "only_switchyard": only_sy,
        "getitem_compared_via_producer": getitem_checked, "getitem_missing": getitem_missing,
        "dlb_outputs_not_kept_by_switchyard": dropped,
        "values_compared": len(out_errs), "inputs_compared": len(in_errs), "dlb_inputs_not_paired": inputs_unmatched,
        "max_rel_err_outputs": max_out, "worst_output": worst_out,
        "max_rel_err_inputs": max_in, "worst_input": worst_in,
        "over_tol": [(k, e if isinstance(e, str) else float(e)) for k, e in failures],
    }


def switchyard_failure(stderr):
    """switchyard's error line(s): they name the node and op where the importer or a kernel
    failed."""
    lines = [ln for ln in stderr.strip().splitlines() if ln.strip()]
    return "\n".join(lines[-6:])


def compare_model(name, args, DLBacktrace, config):
    model, inputs = build(name, args.size)
    with torch.no_grad():
        eager = model(*inputs)
    t0 = time.perf_counter()
    dlb = DLBacktrace(model, inputs, device="cpu")
    setup_s = time.perf_counter() - t0
    dlb_io = dlb.predict(*inputs)  # the first call builds its executor: untimed, as switchyard's first run
    quiet_dlbacktrace()
    ep = dlb.exported_program
    pt2 = os.path.join(args.out, f"{name}.pt2")
    inputs_pt = os.path.join(args.out, f"{name}.inputs.pt")
    io_pt = os.path.join(args.out, f"{name}.switchyard_io.pt")
    torch.export.save(ep, pt2)
    torch.save(tuple(inputs), inputs_pt)
    if os.path.exists(io_pt):
        os.remove(io_pt)

    # DLBacktrace's own final outputs against the eager model (it runs the program itself).
    eager = tensors(eager)
    dlb_final = tensors(dlb_io["output"]["output_values"]) if "output" in dlb_io else []
    dlb_vs_eager = worst([(str(i), rel_err(e, d)) for i, (e, d) in enumerate(zip(eager, dlb_final))])[0]

    # Rounds, each DLBacktrace's --repeat predicts then one switchyard run with --repeat
    # timed runs: a machine whose load changes weighs on both alike.
    dlb_times, sy_medians, sy_walls = [], [], []
    for _ in range(args.rounds):
        dlb_io, times = time_predict(dlb, inputs, args.repeat)
        dlb_times += times
        sy = run_switchyard(args, pt2, inputs_pt, config, io_pt)
        if sy["rc"] != 0 or sy["median_ms"] is None:
            break
        sy_medians.append(sy["median_ms"])
        sy_walls.append(sy["wall_s"])
    if sy_medians:
        sy["median_ms"], sy["round_medians_ms"] = statistics.median(sy_medians), sy_medians
        sy["wall_s"], sy["round_walls_s"] = statistics.median(sy_walls), sy_walls
    result = {"model": name, "input_shapes": [list(t.shape) for t in inputs],
              "dlb_setup_s": setup_s, "dlb_predict_ms": dlb_times,
              "dlb_predict_median_ms": statistics.median(dlb_times),
              "dlb_vs_eager": dlb_vs_eager, "switchyard": {k: v for k, v in sy.items() if k not in ("stdout", "stderr")}}
    if sy["rc"] != 0 or not os.path.exists(io_pt):
        result["switchyard"]["error"] = switchyard_failure(sy["stderr"] or sy["stdout"])
        return result
    sy_io = torch.load(io_pt, weights_only=False)
    result["compare"] = compare(ep, dlb_io, sy_io, args.tol)
    return result


def fmt_ms(x):
    return f"{x:.0f}" if x >= 100 else f"{x:.1f}" if x >= 10 else f"{x:.2f}"


def fmt_err(e):
    return f"{e:.1e}" if isinstance(e, float) else str(e)


def table(results, tol, markdown):
    head = ["model", "input", "FX call_function (getitem)", "keys DLB / switchyard / both",
            "only DLB", "only switchyard", "values compared", f"max rel. error (outputs; tol {tol:g})",
            "max rel. error (inputs)", "DLB predict ms (min-max)", "switchyard ms in process (min-max of rounds)",
            "switchyard CLI wall s"]
    rows = []
    for r in results:
        inp = " ".join("x".join(map(str, s)) for s in r["input_shapes"])
        sy = r["switchyard"]
        d = r["dlb_predict_ms"]
        timing = [f"{fmt_ms(r['dlb_predict_median_ms'])} ({fmt_ms(min(d))}-{fmt_ms(max(d))})"]
        if sy.get("round_medians_ms"):
            m = sy["round_medians_ms"]
            timing.append(f"{fmt_ms(sy['median_ms'])} ({fmt_ms(min(m))}-{fmt_ms(max(m))})")
        else:
            timing.append("failed")
        timing.append(f"{sy['wall_s']:.2f}")
        c = r.get("compare")
        if c is None:
            rows.append([r["model"], inp, "", "", "", "", "", f"switchyard failed: {sy.get('error', '')}",
                         "", *timing])
            continue
        only = ", ".join(f"{len(v)} {k}" for k, v in c["only_dlb"].items())
        rows.append([r["model"], inp, f"{c['fx_call_function']} ({c['fx_getitem']})",
                     f"{c['dlb_keys']} / {c['switchyard_keys']} / {c['common']}", only,
                     str(len(c["only_switchyard"])),
                     f"{c['values_compared']} ({c['getitem_compared_via_producer']} getitem via producer)",
                     f"{fmt_err(c['max_rel_err_outputs'])} at {c['worst_output']}"
                     + (f"; {len(c['over_tol'])} over" if c["over_tol"] else ""),
                     f"{fmt_err(c['max_rel_err_inputs'])} ({c['inputs_compared']} tensors)", *timing])
    if markdown:
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        lines += ["| " + " | ".join(r) + " |" for r in rows]
        return "\n".join(lines)
    widths = [max(len(x[i]) for x in [head] + rows) for i in range(len(head))]
    return "\n".join("  ".join(x[i].ljust(widths[i]) for i in range(len(head))) for x in [head] + rows)


def main():
    ap = argparse.ArgumentParser(formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--models", default=",".join(MODELS), help=f"comma-separated, of {', '.join(MODELS)}")
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "dlbacktrace"),
                    help="folder for the .pt2 files, inputs, node_io and compare.json (default build/dlbacktrace)")
    ap.add_argument("--switchyard", default=os.path.join(ROOT, "build", "bin", "switchyard"))
    ap.add_argument("--config", default=os.path.join(ROOT, "configs", "default.toml"),
                    help="switchyard's config; run with 1 intra-op and 1 inter-op thread")
    ap.add_argument("--repeat", type=int, default=10, help="timed runs of each per round")
    ap.add_argument("--rounds", type=int, default=3,
                    help="rounds, each DLBacktrace's runs then switchyard's (medians over all rounds)")
    ap.add_argument("--warmup", type=int, default=2, help="switchyard's untimed runs after its first")
    ap.add_argument("--size", type=int, default=224, help="resnet18's image size")
    ap.add_argument("--tol", type=float, default=1e-4)
    ap.add_argument("--markdown", action="store_true", help="print the table as markdown")
    args = ap.parse_args()

    models = [m for m in args.models.split(",") if m]
    unknown = [m for m in models if m not in MODELS]
    if unknown or not models:
        raise SystemExit(f"compare_dlbacktrace: unknown model(s) {', '.join(unknown) or '(none given)'} "
                         f"(known: {', '.join(MODELS)})")
    if not os.access(args.switchyard, os.X_OK):
        raise SystemExit(f"compare_dlbacktrace: no switchyard at {args.switchyard} (build it, or pass --switchyard)")
    os.makedirs(args.out, exist_ok=True)
    args.out = os.path.abspath(args.out)
    config = os.path.join(args.out, "one_thread.toml")
    one_thread_config(args.config, config)

    DLBacktrace, version = import_dlbacktrace()
    load_before = os.getloadavg()
    results = []
    for name in models:
        print(f"compare_dlbacktrace: {name} ...", file=sys.stderr, flush=True)
        results.append(compare_model(name, args, DLBacktrace, config))

    summary = {"torch": torch.__version__, "dl_backtrace": version, "torch_threads": torch.get_num_threads(),
               "config": os.path.relpath(args.config, ROOT), "tol": args.tol,
               "cpus": len(os.sched_getaffinity(0)), "loadavg_1min_before_after": [load_before[0], os.getloadavg()[0]],
               "results": results}
    with open(os.path.join(args.out, "compare.json"), "w") as f:
        json.dump(summary, f, indent=1, default=str)

    print(f"\ntorch {torch.__version__}, dl-backtrace {version}, torch threads {torch.get_num_threads()}; "
          f"switchyard {os.path.relpath(args.config, ROOT)} with 1 intra-op thread; "
          f"{args.rounds} rounds of {args.repeat} timed runs each (DLBacktrace: median of every predict; "
          f"switchyard: median of its per-round medians); node_io of every node kept by both; "
          f"{summary['cpus']} CPUs, 1-minute load average {load_before[0]:.1f} before, {os.getloadavg()[0]:.1f} after")
    print(table(results, args.tol, args.markdown))
    bad = False
    for r in results:
        sy, c = r["switchyard"], r.get("compare")
        print(f"\n{r['model']}: DLBacktrace's final outputs vs eager: {fmt_err(r['dlb_vs_eager'])}; "
              f"DLBacktrace(...) setup {r['dlb_setup_s']:.2f} s")
        print(f"  switchyard: {sy['command']}")
        if c is None:
            bad = True
            print(f"  switchyard failed (rc {sy['rc']}):\n    " + sy.get("error", "").replace("\n", "\n    "))
            continue
        for kind, keys in c["only_dlb"].items():
            print(f"  only in DLBacktrace, {kind} ({len(keys)}): {', '.join(keys[:6])}{' ...' if len(keys) > 6 else ''}")
            # Parameters, inputs, the output node and getitems are expected; a call_function
            # node that switchyard did not record is a disagreement.
            bad = bad or kind in ("call_function", "not in the program")
        if c["only_switchyard"]:
            bad = True
            print(f"  only in switchyard ({len(c['only_switchyard'])}): {', '.join(c['only_switchyard'])}")
        if c["getitem_missing"]:
            bad = True
            print(f"  getitem with no switchyard value: {', '.join(c['getitem_missing'])}")
        if c["dlb_outputs_not_kept_by_switchyard"]:
            d = c["dlb_outputs_not_kept_by_switchyard"]
            print(f"  DLBacktrace outputs switchyard does not keep (unused by the program, {len(d)}): "
                  f"{', '.join(d[:4])}{' ...' if len(d) > 4 else ''}")
        print(f"  inputs: {c['inputs_compared']} of DLBacktrace's recorded input tensors paired with "
              f"switchyard's and compared, {c['dlb_inputs_not_paired']} with no switchyard input of their shape")
        if c["over_tol"]:
            bad = True
            for k, e in c["over_tol"][:20]:
                print(f"  over tolerance: {k}: {fmt_err(e)}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
