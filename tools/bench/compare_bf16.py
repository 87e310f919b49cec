#!/usr/bin/env python3
"""bf16 compute against float32 and ONNX Runtime, on the zoo, interleaved.

An optional benchmark: not part of the build or of CTest. Needs ONNX Runtime
(tools/bench/setup_ort.sh) on PYTHONPATH, as compare_ort.py does, whose modules, inputs,
ONNX export and ORT settings it reuses.

Per model and batch, in each of --rounds rounds, back to back: ORT (float32), switchyard
with the float32 config (configs/default.toml) and switchyard with the bf16 config
(configs/bf16.toml), each with intra_op_threads = --threads. A round's result is the median
of its timed runs. The table gives the median round time of each, and the median over rounds
of bf16/fp32 and of bf16/ORT within a round. The error column is bf16's output against
float32's: max|Δ| / max|fp32|.

For the classifiers (--agreement-models), --agreement random inputs (seeded, standard
normal, the model's image shape) run once through both configs as one batch, and the
table counts the inputs whose top-5 class sets are the same.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare_ort as co  # noqa: E402  (exits with a hint when ONNX Runtime is missing)

import argparse  # noqa: E402
import json  # noqa: E402
import shlex  # noqa: E402
import statistics  # noqa: E402

torch = co.torch


def relative_error(got, ref):
    """max|got - ref| / max|ref| over the outputs."""
    worst = 0.0
    for g, r in zip(got, ref):
        scale = max(float(r.double().abs().max()), 1e-30)
        worst = max(worst, float((g.double() - r.double()).abs().max()) / scale)
    return worst


def outputs_of(args, model_path, inputs_path, config, out_path):
    co.run_switchyard(args, model_path, inputs_path, config, 0, save_outputs=out_path)
    return tuple(torch.load(out_path))


def top5_agreement(args, model_path, entry, fp32, bf16):
    """Inputs (of --agreement) whose top-5 classes are the same set under fp32 and bf16."""
    first = co.inputs_for(args.zoo, entry, 1, 64)[0]
    gen = torch.Generator().manual_seed(0)
    images = torch.randn((args.agreement,) + tuple(first.shape[1:]), generator=gen)
    path = os.path.join(args.work, f"{entry['stem']}.agreement.inputs.pt")
    torch.save((images,), path)
    a = outputs_of(args, model_path, path, fp32, path + ".fp32.pt")[0]
    b = outputs_of(args, model_path, path, bf16, path + ".bf16.pt")[0]
    same = sum(set(x.topk(5).indices.tolist()) == set(y.topk(5).indices.tolist()) for x, y in zip(a, b))
    return same, relative_error((b,), (a,))


def bench(args, entry, batch, fp32, bf16):
    stem = entry["stem"]
    model = co.rebuild(args.zoo, entry)
    model_path = os.path.join(args.zoo, stem + ".pt")
    inputs = co.inputs_for(args.zoo, entry, batch, 64)
    in_path = os.path.join(args.work, f"{stem}.b{batch}.inputs.pt")
    torch.save(inputs, in_path)
    onnx_path = os.path.join(args.work, f"{stem}.b{batch}.onnx")
    if not os.path.exists(onnx_path) or os.path.getmtime(onnx_path) < os.path.getmtime(model_path):
        co.export_onnx(model, entry, inputs, onnx_path)
    sess = co.ort_session(onnx_path, args.threads)
    feeds = {i.name: t.numpy() for i, t in zip(sess.get_inputs(), inputs)}
    ref = outputs_of(args, model_path, in_path, fp32, os.path.join(args.work, f"{stem}.b{batch}.fp32.pt"))
    got = outputs_of(args, model_path, in_path, bf16, os.path.join(args.work, f"{stem}.b{batch}.bf16.pt"))
    error = relative_error(got, ref)
    runs = co.runs_per_round(args, lambda: sess.run(None, feeds))
    t = {"ort": [], "fp32": [], "bf16": []}
    for r in range(args.rounds):
        t["ort"].append(co.time_runs(lambda: sess.run(None, feeds), args.warmup, runs))
        t["fp32"].append(co.run_switchyard(args, model_path, in_path, fp32, runs))
        t["bf16"].append(co.run_switchyard(args, model_path, in_path, bf16, runs))
        co.log(f"{stem} b{batch} round {r + 1}: ORT {t['ort'][-1]:.3g} ms, fp32 {t['fp32'][-1]:.3g} ms, "
               f"bf16 {t['bf16'][-1]:.3g} ms")
    rec = {"model": stem, "batch": batch, "threads": args.threads, "rounds": args.rounds,
           "ort_ms": statistics.median(t["ort"]), "fp32_ms": statistics.median(t["fp32"]),
           "bf16_ms": statistics.median(t["bf16"]),
           "bf16_over_fp32": statistics.median(b / f for b, f in zip(t["bf16"], t["fp32"])),
           "bf16_over_ort": statistics.median(b / o for b, o in zip(t["bf16"], t["ort"])),
           "fp32_over_ort": statistics.median(f / o for f, o in zip(t["fp32"], t["ort"])),
           "relative_error": error}
    row = (f"| {stem} | {batch} | {rec['ort_ms']:.3g} | {rec['fp32_ms']:.3g} | {rec['bf16_ms']:.3g} | "
           f"**{rec['bf16_over_fp32']:.2f}** | **{rec['bf16_over_ort']:.2f}** | {rec['fp32_over_ort']:.2f} | "
           f"{error:.2g} |")
    return row, rec


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 epilog="\n".join(__doc__.splitlines()[2:]),
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--zoo", default=co.default_zoo(), help="zoo directory (default: %(default)s)")
    ap.add_argument("--models", default="resnet50,vit_b_16,bert_decomposed,gpt_decomposed")
    ap.add_argument("--batches", default="1,8")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--min-round-ms", type=float, default=300.0)
    ap.add_argument("--switchyard", default=os.path.join(co.SRC, "build", "bin", "switchyard"))
    ap.add_argument("--fp32-config", default=os.path.join(co.SRC, "configs", "default.toml"))
    ap.add_argument("--bf16-config", default=os.path.join(co.SRC, "configs", "bf16.toml"))
    ap.add_argument("--agreement", type=int, default=100, help="random inputs for the top-5 check (0: none)")
    ap.add_argument("--agreement-models", default="resnet50,vit_b_16")
    ap.add_argument("--work", default=os.path.join(co.SRC, "build", "ort-compare"))
    ap.add_argument("--out", help="also write the markdown here")
    ap.add_argument("--json", help="also write the records here")
    args = ap.parse_args(argv)
    os.makedirs(args.work, exist_ok=True)
    torch.set_num_threads(args.threads)
    with open(os.path.join(args.zoo, "zoo.json")) as f:
        zoo = json.load(f)
    fp32 = co.config_with_threads(args.fp32_config, args.threads, args.work)
    bf16 = co.config_with_threads(args.bf16_config, args.threads, args.work)
    command = f"/usr/bin/python3 tools/bench/compare_bf16.py {shlex.join(sys.argv[1:] if argv is None else argv)}"
    lines = [f"**Command:** `PYTHONPATH=<onnxruntime> {command.strip()}`", "",
             f"**Machine:** {co.machine_line(co.machine_info())}", "",
             "| model | batch | ORT fp32 ms | switchyard fp32 ms | switchyard bf16 ms | bf16 / fp32, per round | "
             "bf16 / ORT, per round | fp32 / ORT, per round | bf16 max\\|Δ\\| / max\\|fp32\\| |",
             "|---|---|---|---|---|---|---|---|---|"]
    print("\n".join(lines), flush=True)
    records = []
    for stem in [s.strip() for s in args.models.split(",") if s.strip()]:
        entry = co.zoo_entry(zoo, stem)
        for batch in [int(b) for b in args.batches.split(",") if b.strip()]:
            row, rec = bench(args, entry, batch, fp32, bf16)
            lines.append(row)
            records.append(rec)
            print(row, flush=True)
    classifiers = [s.strip() for s in args.agreement_models.split(",") if s.strip()] if args.agreement else []
    if classifiers:
        lines += ["", f"| model | inputs whose top-5 sets agree (of {args.agreement}) | bf16 max\\|Δ\\| / max\\|fp32\\| |",
                  "|---|---|---|"]
        for stem in classifiers:
            same, error = top5_agreement(args, os.path.join(args.zoo, stem + ".pt"), co.zoo_entry(zoo, stem), fp32, bf16)
            lines.append(f"| {stem} | {same} | {error:.2g} |")
            records.append({"model": stem, "top5_agree": same, "of": args.agreement, "relative_error": error})
            print(lines[-1], flush=True)
    if args.out:
        with open(args.out, "w") as f:
            f.write("\n".join(lines) + "\n")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"command": command, "records": records}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
