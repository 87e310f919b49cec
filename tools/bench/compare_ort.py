#!/usr/bin/python3
"""switchyard vs ONNX Runtime vs LibTorch on the model zoo, same modules, inputs and threads.

    tools/bench/setup_ort.sh                      # once: onnxruntime into build/onnxruntime-python
    PYTHONPATH=build/onnxruntime-python /usr/bin/python3 tools/bench/compare_ort.py \\
        [--zoo build/zoo] [--models resnet18,...] [--batches 1,8] [--threads 2] \\
        [--rounds 3] [--runs 10] [--warmup 3] [--min-round-ms 300] [--seq 64] [--out table.md] \\
        [--json run.json]

An optional benchmark: not part of the build or of CTest. For each zoo model (built by
tools/zoo/export_zoo.py; the default zoo is the one the build's CMakeCache names) and batch:
(`--zoo` may also name the plain zoo, tools/zoo/export_plain_zoo.py's folder, with --models
naming its stems, e.g. lstm_bidir,gru_stateful: their modules are rebuilt from that
script's specs and seeds, and sequence models run at --seq steps.)

- ONNX Runtime: the module rebuilt in this process with export_zoo.build_model (the same
  code and seeds as the zoo; checked against the zoo's expected outputs), exported with
  torch.onnx.export at opset 17 with static shapes, run on the CPU provider with
  intra-op threads = --threads, inter-op 1, all graph optimisations.
- switchyard: `switchyard run ZOO/<stem>.pt --inputs IN.pt --config CFG --warmup W --repeat RUNS`, with
  CFG = configs/default.toml whose intra_op_threads is set to --threads. It prints median_ms.
- LibTorch: the zoo's TorchScript file, torch.jit.freeze'd, forward under inference_mode in
  this process, torch.set_num_threads(--threads), OpenBLAS on 1 thread (design.md: faster).

Contenders are interleaved in rounds (ORT, switchyard, LibTorch, then again) so that load
from elsewhere hits all alike. Each round is --warmup untimed runs then RUNS timed runs
(switchyard's first run, which plans, comes before its --warmup); a round's result is its
median. RUNS is --runs, raised for fast models so that a round of ORT takes about
--min-round-ms: the same count for all three contenders (a median of 5 sub-millisecond runs
swings with every hiccup of the machine).
The table gives, per contender, the min / median / max of the round medians, the max/min
spread of switchyard's and ORT's round medians, switchyard/ORT and switchyard/LibTorch from
the medians, and the median over rounds of switchyard/ORT within a round (the two ran
back to back, so a change of the host's speed between rounds cancels out). Before
timing, ORT's and switchyard's outputs are checked once against the eager module's:
max|diff| and whether it is within 1e-4 * max(1, max|ref|), so that the contenders are
known to do the same work. Batch 8 repeats the zoo's batch-4 inputs twice,
as tools/bench/bench_models does.

Before each round, tools/bench/host_probe (next to --switchyard; build it with
`cmake --build build --target host_probe`) measures the cross-core round trip of the
first two CPUs, and the table gives its min / max over the row's rounds. A virtual host
may move its vCPUs further apart for minutes at a time (on the 2-vCPU EPYC of
docs/benchmarks.md, about 80 ns then about 400 ns), and every contender's small-model
times move with it: a spread across such a change is the host's.

--json FILE also writes the run for tools/bench/check_baseline.py, which compares it with
the stored ratios (tools/bench/baseline_ort.json): the machine, date, commit, command and
settings, and one record per model and batch with zoo ("zoo" or "zoo-plain"), model, batch,
threads, rounds, ratio (the median of the per-round switchyard/ORT ratios), ratio_min and
ratio_max (over the rounds), each contender's median of round medians in ms, and whether
both outputs were within the bound; a model that failed has "error" instead.
"""
import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # for LibTorch in this process

import argparse  # noqa: E402
import datetime  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import re  # noqa: E402
import shlex  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(SRC, "tools", "zoo"))
sys.dont_write_bytecode = True

try:
    import torch  # noqa: E402
    import export_zoo  # noqa: E402
except ImportError as e:
    sys.exit(f"compare_ort: {e}; run this with Debian's /usr/bin/python3 (python3-torch)")
try:
    import onnxruntime as ort  # noqa: E402
except ImportError as e:
    sys.exit(f"compare_ort: {e}; install it with tools/bench/setup_ort.sh and set PYTHONPATH "
             "to the directory it prints")

DEFAULT_MODELS = "resnet18,resnet50,mobilenet_v3_small,vit_b_16,bert_decomposed,gpt_decomposed"


def log(msg):
    print(msg, file=sys.stderr, flush=True)


# ----------------------------------------------------------------------------- inputs, modules

def zoo_entry(zoo, stem):
    for m in zoo["models"]:
        if m["stem"] == stem:
            return m
    sys.exit(f"compare_ort: {stem} is not in the zoo; it has "
             f"{', '.join(m['stem'] for m in zoo['models'])}")


def zoo_batch(entry, batch):
    for b in entry["batches"]:
        if b["batch"] == batch:
            return b
    return None


def plain_spec(entry):
    """export_plain_zoo's spec for a plain zoo entry (which has "sets", not "batches")."""
    import export_plain_zoo
    return export_plain_zoo, export_plain_zoo.BY_STEM[entry["stem"]]


def inputs_for(zoo_dir, entry, batch, seq):
    """The zoo's inputs at this batch, or a smaller batch's repeated (batch 8 = batch 4 twice).
    Plain zoo: export_plain_zoo's inputs at this batch (and --seq steps for sequence models)."""
    if "sets" in entry:
        epz, spec = plain_spec(entry)
        shape = {"batch": batch, **({"seq": seq} if "seq" in spec.trace_at else {})}
        return epz.make_inputs(spec, shape)
    b = zoo_batch(entry, batch)
    if b is not None:
        return tuple(torch.load(os.path.join(zoo_dir, b["inputs"])))
    smaller = [x for x in entry["batches"] if batch % x["batch"] == 0]
    if not smaller:
        sys.exit(f"compare_ort: no zoo batch of {entry['stem']} divides {batch}")
    b = max(smaller, key=lambda x: x["batch"])
    base = torch.load(os.path.join(zoo_dir, b["inputs"]))
    return tuple(torch.cat([t] * (batch // b["batch"])) for t in base)


def eager_outputs(model, entry, inputs):
    with export_zoo.grad_mode(entry["trace_mode"]):
        return tuple(t.detach() for t in export_zoo.as_tuple(model(*inputs)))


def rebuild(zoo_dir, entry):
    """export_zoo's module for this stem, checked against the zoo's own outputs."""
    if "sets" in entry:  # the plain zoo: its expected outputs are float64's, rounded
        epz, spec = plain_spec(entry)
        torch.manual_seed(epz.seed_of(spec.stem))
        model = spec.build().eval()
        s = entry["sets"][0]
        got = eager_outputs(model, entry, tuple(torch.load(os.path.join(zoo_dir, s["inputs"]))))
        want = torch.load(os.path.join(zoo_dir, s["expected"]))
        export_zoo.check_close(f"{entry['stem']}: rebuilt module vs the plain zoo's outputs", got, want)
        return model
    model = export_zoo.build_model(entry["base"])
    b = entry["batches"][0]
    got = eager_outputs(model, entry, tuple(torch.load(os.path.join(zoo_dir, b["inputs"]))))
    want = torch.load(os.path.join(zoo_dir, b["expected"]))
    export_zoo.check_close(f"{entry['stem']}: rebuilt module vs the zoo's outputs", got, want)
    return model


def export_onnx(model, entry, inputs, path):
    with export_zoo.grad_mode(entry["trace_mode"]), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, inputs, path, opset_version=17, do_constant_folding=True,
                          input_names=[f"input{i}" for i in range(len(inputs))])


def ort_session(path, threads):
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def bound_check(got, ref):
    """(max|diff|, within 1e-4 * max(1, max|ref|)) over outputs."""
    worst, ok = 0.0, True
    for g, r in zip(got, ref):
        g = torch.as_tensor(g).double()
        r = r.double()
        if g.shape != r.shape:
            return float("inf"), False
        d = float((g - r).abs().max())
        worst = max(worst, d)
        ok &= d <= 1e-4 * max(1.0, float(r.abs().max()))
    return worst, ok and len(got) == len(ref)


# ----------------------------------------------------------------------------- contenders

def time_runs(fn, warmup, runs):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000.0)
    return statistics.median(times)


def runs_per_round(args, ort_forward):
    """--runs, or more where ORT's forward is fast: enough for a round of about --min-round-ms."""
    probe = time_runs(ort_forward, 1, 3)
    wanted = int(args.min_round_ms / max(probe, 1e-3)) + 1
    return max(args.runs, min(wanted, 2000))


def switchyard_env():
    env = dict(os.environ)
    env.pop("OPENBLAS_NUM_THREADS", None)  # switchyard sets its own from the config
    env.pop("PYTHONPATH", None)
    return env


def run_switchyard(args, model_path, inputs_path, config, runs, save_outputs=None):
    cmd = [args.switchyard, "run", model_path, "--inputs", inputs_path, "--config", config,
           "--log-level", "warn", "--no-table", "--show", "0"]
    cmd += ["--warmup", str(args.warmup), "--repeat", str(runs)] if runs else []
    cmd += ["--save-outputs", save_outputs] if save_outputs else []
    res = subprocess.run(cmd, capture_output=True, text=True, env=switchyard_env())
    if res.returncode != 0:
        raise RuntimeError(f"{shlex.join(cmd)} failed ({res.returncode}): "
                           f"{(res.stderr or res.stdout).strip()[-600:]}")
    if not runs:
        return None
    m = re.search(r"^median_ms: ([0-9.eE+-]+)", res.stdout, re.M)
    if not m:
        raise RuntimeError(f"no median_ms in the output of {shlex.join(cmd)}")
    return float(m.group(1))


def missing_plugins(args):
    """Family plugins that default.toml names but the build lacks (their nodes fall to aten)."""
    plugins = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(args.switchyard))), "plugins")
    return [p for p in ("linalg", "conv", "attention", "elementwise", "shape")
            if not os.path.exists(os.path.join(plugins, f"libswitchyard-{p}.so"))]


def config_with_threads(path, threads, work):
    """A copy of the config at `path`, in `work`, with intra_op_threads = threads."""
    text, n = re.subn(r"(?m)^(\s*intra_op_threads\s*=\s*)\d+", rf"\g<1>{threads}", open(path).read())
    if n != 1:
        sys.exit(f"{os.path.basename(sys.argv[0])}: {path} has no single intra_op_threads line to set")
    out = os.path.join(work, f"{os.path.splitext(os.path.basename(path))[0]}.threads{threads}.toml")
    with open(out, "w") as f:
        f.write(text)
    return out


def thread_config(args, work):
    """--config (configs/default.toml) with intra_op_threads = --threads."""
    return config_with_threads(args.config, args.threads, work)


# ----------------------------------------------------------------------------- machine, table

def machine_info():
    cpu = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    probe = subprocess.run([sys.executable, "-c", "import torch; a = torch.ones(64, 64); a @ a"],
                           capture_output=True, text=True,
                           env=dict(os.environ, OPENBLAS_VERBOSE="2"))
    core = re.search(r"Core: (\S+)", probe.stdout + probe.stderr)
    return {"cpu": cpu, "cores": os.cpu_count(), "openblas_core": core.group(1) if core else "unknown",
            "linux": platform.release(), "load_average": [round(x, 2) for x in os.getloadavg()]}


def machine_line(info):
    return (f"{info['cpu']}; {info['cores']} CPUs; OpenBLAS core {info['openblas_core']} "
            f"(OPENBLAS_VERBOSE=2); Linux {info['linux']}; load average "
            f"{' '.join(f'{x:.2f}' for x in info['load_average'])}")


def fmt(ms):
    return f"{ms:.3g}" if ms < 100 else f"{ms:.0f}"


def spread_cell(values):
    return f"{fmt(min(values))} / {fmt(statistics.median(values))} / {fmt(max(values))}"


def host_probe_path(args):
    return os.path.join(os.path.dirname(args.switchyard), "host_probe")


def cross_core_ns(args):
    """The host's cross-core round trip now (host_probe), or None without the probe."""
    try:
        res = subprocess.run([host_probe_path(args)], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    m = re.search(r"cross_core_ns: ([0-9.]+)", res.stdout)
    return float(m.group(1)) if res.returncode == 0 and m else None


def row(stem, batch, res):
    sy, ox, lt = res["switchyard"], res["ort"], res["libtorch"]
    sy_med, ox_med, lt_med = (statistics.median(v) for v in (sy, ox, lt))
    host = [ns for ns in res["cross_core_ns"] if ns is not None]
    return (f"| {stem} | {batch} | {spread_cell(sy)} | {spread_cell(ox)} | {spread_cell(lt)} | "
            f"{max(sy) / min(sy):.2f} | {max(ox) / min(ox):.2f} | {sy_med / ox_med:.2f} | "
            f"{statistics.median(a / b for a, b in zip(sy, ox)):.2f} | {sy_med / lt_med:.2f} | "
            f"{res['sy_diff']:.2g}{'' if res['sy_ok'] else ' (over)'} | "
            f"{res['ort_diff']:.2g}{'' if res['ort_ok'] else ' (over)'} | "
            f"{f'{min(host):.0f} / {max(host):.0f}' if host else '-'} |")


def record(args, zoo_name, stem, batch, res):
    """The row for --json: what check_baseline.py compares, and the times it came from."""
    per_round = [a / b for a, b in zip(res["switchyard"], res["ort"])]
    host = [ns for ns in res["cross_core_ns"] if ns is not None]
    return {"zoo": zoo_name, "model": stem, "batch": batch, "threads": args.threads,
            "rounds": args.rounds, "ratio": statistics.median(per_round),
            "ratio_min": min(per_round), "ratio_max": max(per_round),
            "switchyard_ms": statistics.median(res["switchyard"]), "ort_ms": statistics.median(res["ort"]),
            "libtorch_ms": statistics.median(res["libtorch"]), "outputs_ok": res["sy_ok"] and res["ort_ok"],
            "cross_core_ns": [min(host), max(host)] if host else None}


HEADER = ("| model | batch | switchyard ms (min / median / max) | ORT ms (min / median / max) | "
          "LibTorch ms (min / median / max) | switchyard spread (max/min) | ORT spread (max/min) | "
          "switchyard / ORT | switchyard / ORT, per round | switchyard / LibTorch | switchyard max\\|Δ\\| | "
          "ORT max\\|Δ\\| | host cross-core ns (min / max) |\n"
          "|---|---|---|---|---|---|---|---|---|---|---|---|---|")


# ----------------------------------------------------------------------------- main

def bench(args, zoo_dir, entry, batches, config, work, records, zoo_name):
    """The markdown rows of one model; its --json records go to records as each batch ends."""
    stem = entry["stem"]
    model = rebuild(zoo_dir, entry)
    zoo_module = os.path.join(zoo_dir, stem + ".pt")
    frozen = torch.jit.freeze(torch.jit.load(zoo_module).eval())
    rows = []
    for batch in batches:
        inputs = inputs_for(zoo_dir, entry, batch, args.seq)
        in_path = os.path.join(work, f"{stem}.b{batch}.inputs.pt")
        torch.save(inputs, in_path)
        onnx_path = os.path.join(work, f"{stem}.b{batch}.onnx")
        if not os.path.exists(onnx_path) or os.path.getmtime(onnx_path) < os.path.getmtime(zoo_module):
            t0 = time.time()
            export_onnx(model, entry, inputs, onnx_path)
            log(f"{stem} b{batch}: ONNX export {time.time() - t0:.1f} s")
        sess = ort_session(onnx_path, args.threads)
        feeds = {i.name: t.numpy() for i, t in zip(sess.get_inputs(), inputs)}

        # Equal work: ORT's and switchyard's outputs against the eager module's, once.
        ref = eager_outputs(model, entry, inputs)
        ort_diff, ort_ok = bound_check(sess.run(None, feeds), ref)
        out_path = os.path.join(work, f"{stem}.b{batch}.switchyard_out.pt")
        run_switchyard(args, zoo_module, in_path, config, 0, save_outputs=out_path)
        sy_diff, sy_ok = bound_check(tuple(torch.load(out_path)), ref)

        res = {"switchyard": [], "ort": [], "libtorch": [], "cross_core_ns": [], "sy_diff": sy_diff,
               "sy_ok": sy_ok, "ort_diff": ort_diff, "ort_ok": ort_ok}

        def libtorch_forward():
            with torch.inference_mode():
                frozen(*inputs)

        runs = runs_per_round(args, lambda: sess.run(None, feeds))
        if runs != args.runs:
            log(f"{stem} b{batch}: {runs} timed runs per round (--min-round-ms {args.min_round_ms:g})")
        for r in range(args.rounds):
            res["cross_core_ns"].append(cross_core_ns(args))
            res["ort"].append(time_runs(lambda: sess.run(None, feeds), args.warmup, runs))
            res["switchyard"].append(run_switchyard(args, zoo_module, in_path, config, runs))
            res["libtorch"].append(time_runs(libtorch_forward, args.warmup, runs))
            ns = res["cross_core_ns"][-1]
            log(f"{stem} b{batch} round {r + 1}: switchyard {res['switchyard'][-1]:.3g} ms, "
                f"ORT {res['ort'][-1]:.3g} ms, LibTorch {res['libtorch'][-1]:.3g} ms"
                + (f", host cross-core {ns:.0f} ns" if ns is not None else ""))
        rows.append(row(stem, batch, res))
        records.append(record(args, zoo_name, stem, batch, res))
        print(rows[-1], flush=True)
    return rows


ZOO_NAMES = {"switchyard-zoo": "zoo", "switchyard-plain-zoo": "zoo-plain"}  # zoo.json's format -> key


def git_commit():
    """HEAD of the source tree, or "unknown" (rev-parse only reads; the index is left alone)."""
    res = subprocess.run(["git", "-C", SRC, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return res.stdout.strip() if res.returncode == 0 else "unknown"


def write_json(args, run, records):
    """The --json file: the run's settings and machine, and one record per model and batch."""
    run = {"format": "switchyard-compare-ort", "version": 1, **run, "commit": git_commit(),
           "ort_version": ort.__version__, "torch_version": torch.__version__,
           "settings": {"threads": args.threads, "rounds": args.rounds, "runs": args.runs,
                        "warmup": args.warmup, "min_round_ms": args.min_round_ms, "seq": args.seq},
           "load_average_end": [round(x, 2) for x in os.getloadavg()], "records": records}
    os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
    with open(args.json, "w") as f:
        json.dump(run, f, indent=1)
        f.write("\n")
    log(f"compare_ort: wrote {args.json} ({len(records)} records)")


def default_zoo():
    cache = os.path.join(SRC, "build", "CMakeCache.txt")
    try:
        with open(cache) as f:
            for line in f:
                if line.startswith("SWITCHYARD_ZOO_DIR:"):
                    return line.split("=", 1)[1].strip()
    except OSError:
        pass
    return os.path.join(SRC, "build", "zoo")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 2)[2])
    ap.add_argument("--zoo", default=default_zoo(), help="zoo directory (default: %(default)s)")
    ap.add_argument("--models", help=f"zoo stems (default: {DEFAULT_MODELS}; the plain zoo has no default)")
    ap.add_argument("--seq", type=int, default=64,
                    help="plain zoo sequence models: time steps (default %(default)s)")
    ap.add_argument("--batches", default="1,8", help="batch sizes (default: %(default)s)")
    ap.add_argument("--threads", type=int, default=2, help="intra-op threads for all three")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds (default 3)")
    ap.add_argument("--runs", type=int, default=10, help="timed runs per round (default 10)")
    ap.add_argument("--warmup", type=int, default=3, help="untimed runs per round (default 3)")
    ap.add_argument("--min-round-ms", type=float, default=300.0,
                    help="raise the timed runs of fast models until a round of ORT takes about this "
                         "long; 0: exactly --runs (default %(default)s)")
    ap.add_argument("--switchyard", default=os.path.join(SRC, "build", "bin", "switchyard"))
    ap.add_argument("--config", default=os.path.join(SRC, "configs", "default.toml"))
    ap.add_argument("--work", default=os.path.join(SRC, "build", "ort-compare"),
                    help="ONNX files, inputs and outputs (default: %(default)s)")
    ap.add_argument("--out", help="also write the markdown to this file")
    ap.add_argument("--json", metavar="FILE",
                    help="also write the run for tools/bench/check_baseline.py (see the end of this help)")
    args = ap.parse_args(argv)
    if min(args.threads, args.rounds, args.runs, args.warmup) < 1:
        ap.error("--threads, --rounds, --runs and --warmup must be >= 1")
    if not os.access(args.switchyard, os.X_OK):
        sys.exit(f"compare_ort: {args.switchyard} not found; build it: "
                 "cmake --build build --target switchyard")
    zoo_json = os.path.join(args.zoo, "zoo.json")
    if not os.path.exists(zoo_json):
        sys.exit(f"compare_ort: {zoo_json} not found; export the zoo: cmake --build build --target zoo")
    with open(zoo_json) as f:
        zoo = json.load(f)
    batches = [int(b) for b in args.batches.split(",") if b.strip()]
    if args.models is None and zoo.get("format") == "switchyard-plain-zoo":
        sys.exit("compare_ort: name the plain zoo's models with --models (e.g. lstm_bidir,gru_stateful)")
    stems = [s.strip() for s in (args.models or DEFAULT_MODELS).split(",") if s.strip()]
    entries = [zoo_entry(zoo, s) for s in stems]

    torch.set_num_threads(args.threads)
    os.makedirs(args.work, exist_ok=True)
    config = thread_config(args, args.work)
    command = (f"PYTHONPATH={os.environ.get('PYTHONPATH', '')} /usr/bin/python3 "
               f"tools/bench/compare_ort.py {shlex.join(sys.argv[1:] if argv is None else argv)}")
    date = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    machine = machine_info()
    lines = [f"**Command:** `{command.strip()}`", "",
             f"**Machine (at start):** {machine_line(machine)}", "",
             f"ONNX Runtime {ort.__version__} (CPU provider, {args.threads} intra-op threads, "
             f"inter-op 1, ORT_ENABLE_ALL, opset 17, static shapes); switchyard "
             f"`run --config configs/default.toml` with intra_op_threads = {args.threads}; "
             f"LibTorch {torch.__version__} frozen TorchScript, {args.threads} threads, OpenBLAS "
             f"{os.environ.get('OPENBLAS_NUM_THREADS')} thread. {args.rounds} interleaved rounds "
             f"of {args.warmup} warm-up + {args.runs} timed runs (more for fast models: about "
             f"{args.min_round_ms:g} ms of ORT per round, the same count for all); each cell is the min / median / "
             "max of the round medians; ratios use the medians; max|Δ| is against the eager "
             "module (\"over\": outside 1e-4 * max(1, max|ref|)); the host's cross-core round trip is "
             "measured before each round (tools/bench/host_probe).", "", HEADER]
    if not os.access(host_probe_path(args), os.X_OK):
        lines.insert(-1, f"**Note:** {host_probe_path(args)} not built, so the host's cross-core round "
                     "trip is not recorded; build it with `cmake --build build --target host_probe`.\n")
    missing = missing_plugins(args)
    if missing:
        lines.insert(-1, f"**Warning:** plugins not built: {', '.join(missing)} (their nodes run on "
                     "aten); build them with `cmake --build build`.\n")
    print("\n".join(lines), flush=True)
    records, zoo_name = [], ZOO_NAMES.get(zoo.get("format"), zoo.get("format", "unknown"))
    for entry in entries:
        try:
            lines += bench(args, args.zoo, entry, batches, config, args.work, records, zoo_name)
        except (RuntimeError, AssertionError) as e:  # one model failing does not end the run
            lines.append(f"| {entry['stem']} | | failed: {str(e).strip()[:300]} | | | | | | | | | | |")
            print(lines[-1], flush=True)
            done = {r["batch"] for r in records if r["model"] == entry["stem"]}
            records += [{"zoo": zoo_name, "model": entry["stem"], "batch": b, "threads": args.threads,
                         "rounds": args.rounds, "error": str(e).strip()[:300]}
                        for b in batches if b not in done]
    lines += ["", f"Load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}"]
    print(lines[-1], flush=True)
    if args.out:
        with open(args.out, "w") as f:
            f.write("\n".join(lines) + "\n")
    if args.json:
        write_json(args, {"date": date, "command": command.strip(), "machine": machine,
                          "zoo": zoo_name}, records)
    return 0


if __name__ == "__main__":
    sys.exit(main())
