#!/usr/bin/python3
"""Throughput of a dataset run: switchyard.run_dataset on a Dask LocalCluster with 1 and
2 worker processes (1 thread each), in one process (client=None), and the CLI's
`run --inputs-dir`, on the same input files. Rounds are interleaved; medians reported.
Not a test: docs/benchmarks.md ("Datasets on a Dask cluster") has the results.

    PYTHONPATH=build/python /usr/bin/python3 tools/bench/dataset_dask.py build/zoo/resnet18.pt /tmp/ds-bench \
        --samples 1000 --rounds 3 --nodes 'layer4.*' fc

Each contender runs in its own process (its CPU time, workers included, is measured from
the outside: a load-independent figure on a shared machine) with OMP_NUM_THREADS=1 (as Dask's workers get),
and the switchyard config is configs/default.toml with `intra_op_threads` set to the
contender's threads. The node_io is "outputs"; the Python runs keep only --nodes (the CLI
has no filter, so it writes every node's record). Outputs of every contender are compared
with the in-process run's, bit for bit, and the --nodes records with the CLI's.
"""
import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time

import torch

CONTENDERS = ["local", "local-x2", "dask-1", "dask-2", "cli-1t", "cli-2t"]
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def make_inputs(folder, samples, size):
    os.makedirs(folder, exist_ok=True)
    torch.manual_seed(0)
    for i in range(samples):
        path = os.path.join(folder, f"img{i:05d}.pt")
        x = torch.randn(1, 3, size, size)  # drawn even when the file exists: same values every time
        if not os.path.exists(path):
            torch.save((x,), path)


def make_config(work, threads):
    text = open(os.path.join(ROOT, "configs", "default.toml")).read()
    path = os.path.join(work, f"threads{threads}.toml")
    with open(path, "w") as f:
        f.write(text.replace("intra_op_threads = 2", f"intra_op_threads = {threads}"))
    return path


def run_one(args, contender, out):
    """Runs one contender here; returns (seconds, bytes per sample, start-up seconds)."""
    inputs = os.path.join(args.work, "inputs")
    if contender.startswith("cli"):
        threads = 2 if contender == "cli-2t" else 1
        cmd = [args.cli, "run", args.model, "--config", make_config(args.work, threads), "--inputs-dir", inputs,
               "--save-outputs", out, "--node-io", "outputs", "--no-progress"]
        start = time.monotonic()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        seconds = time.monotonic() - start
        files = [os.path.join(out, f) for f in os.listdir(out)]
        return seconds, sum(os.path.getsize(f) for f in files) / (len(files) / 2), 0.0
    kwargs = dict(config=make_config(args.work, 1), node_io="outputs", nodes=args.nodes,
                  batch_size=args.batch_size, progress=False)
    if contender == "local":
        return timed_run(args, inputs, out, kwargs)
    if contender == "local-x2":
        return two_processes(args, inputs, out, kwargs)
    from distributed import Client, LocalCluster
    workers = int(contender.split("-")[1])
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        return timed_run(args, inputs, out, dict(kwargs, client=client))


def two_processes(args, inputs, out, kwargs):
    """Two in-process runs at once, each on half the files, with no Dask: the most that two
    processes get from this machine (shared caches and memory bandwidth), Dask's ceiling."""
    import multiprocessing
    files = [os.path.join(inputs, n) for n in sorted(os.listdir(inputs))]
    ctx = multiprocessing.get_context("spawn")
    barrier, results = ctx.Barrier(2), ctx.Queue()
    halves = [ctx.Process(target=half_run, args=(args, files[k::2], out, kwargs, barrier, results)) for k in (0, 1)]
    for h in halves:
        h.start()
    got = [results.get() for _ in halves]
    for h in halves:
        h.join()
    return max(g[0] for g in got), statistics.mean(g[1] for g in got), max(g[2] for g in got)


def half_run(args, files, out, kwargs, barrier, results):
    results.put(timed_run(args, files, out, kwargs, barrier))


def timed_run(args, inputs, out, kwargs, barrier=None):
    """(seconds, bytes per sample, start-up seconds) of a run over every input file. With
    --warm, a first run over a few samples into a scratch folder loads the model on every
    worker (as a long run's first tasks do) and is timed apart as start-up."""
    import switchyard
    startup = 0.0
    if args.warm:
        files = inputs if isinstance(inputs, list) else [os.path.join(inputs, n) for n in sorted(os.listdir(inputs))]
        scratch = f"{out}-warm{os.getpid()}"
        start = time.monotonic()
        switchyard.run_dataset(args.model, files[:args.warm], scratch, **kwargs)
        startup = time.monotonic() - start
        shutil.rmtree(scratch, ignore_errors=True)
    if barrier is not None:
        barrier.wait()
    start = time.monotonic()
    summary = switchyard.run_dataset(args.model, inputs, out, **kwargs)
    return time.monotonic() - start, summary.bytes_per_sample, startup


def cpu_seconds():
    """User + system CPU time of this process's finished children (and theirs)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def same(a, b):
    if isinstance(a, torch.Tensor):
        return torch.equal(a, b)
    if isinstance(a, dict):
        return all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


def compare(out, reference):
    """'bit-identical' when every output (and node_io record the reference has) is equal."""
    bad = []
    for f in sorted(os.listdir(reference)):
        mine = torch.load(os.path.join(out, f))
        theirs = torch.load(os.path.join(reference, f))
        if f.endswith(".node_io.pt"):
            # the reference filtered; the CLI writes every node: compare the reference's nodes
            mine, theirs = (mine if len(mine) <= len(theirs) else {k: mine[k] for k in theirs}), theirs
            if list(mine) != list(theirs):
                bad.append(f)
                continue
        if not same(mine, theirs):
            bad.append(f)
    return "bit-identical" if not bad else f"{len(bad)} file(s) differ, e.g. {bad[0]}"


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model")
    p.add_argument("work", help="a folder for the inputs, configs and outputs")
    p.add_argument("--samples", type=int, default=1000)
    p.add_argument("--size", type=int, default=224, help="image height and width")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--batch-size", type=int, default=1)
    p.add_argument("--warm", type=int, default=0, metavar="N",
                   help="first run N samples apart (per contender, same workers) and time the full "
                        "run after it: the throughput of workers that are up, without the start-up")
    p.add_argument("--nodes", nargs="*", default=["layer4.*", "fc"])
    p.add_argument("--contenders", nargs="*", default=CONTENDERS, choices=CONTENDERS)
    p.add_argument("--cli", default=os.path.join(ROOT, "build", "bin", "switchyard"))
    p.add_argument("--env", action="append", default=[], metavar="KEY=VALUE",
                   help="set in every contender's environment (and so its Dask workers'), e.g. "
                        "MALLOC_MMAP_THRESHOLD_=67108864")
    p.add_argument("--one", help=argparse.SUPPRESS)   # internal: run this contender, print JSON
    p.add_argument("--out", help=argparse.SUPPRESS)
    args = p.parse_args()
    args.model, args.work = os.path.abspath(args.model), os.path.abspath(args.work)
    if args.one:
        seconds, per_sample, startup = run_one(args, args.one, args.out)
        print(json.dumps({"seconds": seconds, "bytes_per_sample": per_sample, "startup": startup}))
        return
    make_inputs(os.path.join(args.work, "inputs"), args.samples, args.size)
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    env.update(item.split("=", 1) for item in args.env)
    times = {c: [] for c in args.contenders}
    startups = {c: [] for c in args.contenders}
    cpu = {c: [] for c in args.contenders}
    per_sample, checks = {}, {}
    for r in range(args.rounds):
        for c in args.contenders:
            out = os.path.join(args.work, f"out-{c}")
            shutil.rmtree(out, ignore_errors=True)
            load = os.getloadavg()[0]
            cmd = [sys.executable, __file__, args.model, args.work, "--one", c, "--out", out,
                   "--batch-size", str(args.batch_size), "--warm", str(args.warm), "--cli", args.cli, "--nodes", *args.nodes]
            cpu_before = cpu_seconds()
            result = json.loads(subprocess.run(cmd, check=True, env=env, capture_output=True, text=True).stdout)
            cpu[c].append(cpu_seconds() - cpu_before)  # the contender and its workers, start-up included
            times[c].append(result["seconds"])
            startups[c].append(result["startup"])
            per_sample[c] = result["bytes_per_sample"]
            print(f"round {r + 1} {c:7} {result['seconds']:8.2f} s  {args.samples / result['seconds']:6.2f} "
                  f"samples/s  {cpu[c][-1]:7.1f} CPU s  start-up {result['startup']:.1f} s  load {load:.1f}", flush=True)
            if r == 0 and c != "local" and "local" in args.contenders:
                checks[c] = compare(out, os.path.join(args.work, "out-local"))
            if c != "local":
                shutil.rmtree(out, ignore_errors=True)
    print("\n| contender | median s | samples/s | runs (s) | start-up (s) | CPU ms per sample | bytes per sample | files vs in-process |")
    print("|---|---|---|---|---|---|---|---|")
    for c in args.contenders:
        med = statistics.median(times[c])
        print(f"| {c} | {med:.1f} | {args.samples / med:.2f} | {', '.join(f'{t:.1f}' for t in times[c])} "
              f"| {statistics.median(startups[c]):.1f} "
              f"| {1000 * statistics.median(cpu[c]) / args.samples:.0f} | {per_sample[c] / 1e6:.2f} MB "
              f"| {checks.get(c, '(reference)' if c == 'local' else '-')} |")
    if "dask-1" in times and "dask-2" in times:
        ratios = [a / b for a, b in zip(times["dask-1"], times["dask-2"])]
        print(f"\n2 workers / 1 worker: {statistics.median(times['dask-1']) / statistics.median(times['dask-2']):.2f}x "
              f"(medians); per round: {', '.join(f'{x:.2f}' for x in ratios)}")
    if "local" in times and "local-x2" in times:
        ratios = [a / b for a, b in zip(times["local"], times["local-x2"])]
        print(f"two processes / one, no Dask (the ceiling): {statistics.median(ratios):.2f}x median of per-round; "
              f"per round: {', '.join(f'{x:.2f}' for x in ratios)}")


if __name__ == "__main__":
    main()
