#!/usr/bin/python3
"""Compare compare_ort.py runs with the stored switchyard/ONNX Runtime ratios; flag regressions.

    tools/bench/check_baseline.py --commands          # the compare_ort.py commands for the baseline's rows
    PYTHONPATH=build/onnxruntime-python /usr/bin/python3 tools/bench/compare_ort.py \\
        --batches 1 --rounds 5 --json build/ort-check/zoo.t2.b1.json
    tools/bench/check_baseline.py build/ort-check/*.json                  # compare
    tools/bench/check_baseline.py --update build/ort-check/*.json         # refresh the baseline

The baseline (default tools/bench/baseline_ort.json) holds, per (zoo, model, batch, threads),
the median over interleaved rounds of switchyard's time over ONNX Runtime's within a round
(compare_ort.py's "switchyard / ORT, per round" column). Ratios, not milliseconds, so that
a baseline made on one machine means something on another.

Each row of the runs (compare_ort.py --json files) is matched with the baseline's row of the
same zoo, model, batch and thread count. A row is flagged WORSE when its new ratio is more
than --tolerance (default 0.10, i.e. 10%) above the baseline's: new > baseline * 1.10. A
model that failed in the run is flagged FAILED. Rows found on one side only are listed as
"not compared". A row present in several runs counts with the median of their ratios.

--update writes the runs' rows into the baseline: rows of the same key are replaced, the
baseline's other rows are kept, and the file's "sources" names the run (date, machine,
command) each row came from. Commit the file to make it the new baseline.

Exit status: 0 when no row is flagged (and always after a successful --update), 1 when a row
is flagged, 2 on a usage error (a missing or malformed file, no row in common, runs at a
thread count the baseline lacks), said in one line on stderr.
"""
import argparse
import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_BASELINE = os.path.join(HERE, "baseline_ort.json")
BASELINE_FORMAT = "switchyard-ort-baseline"
RUN_FORMAT = "switchyard-compare-ort"
ZOO_DIRS = {"zoo": "build/zoo", "zoo-plain": "build/zoo-plain"}  # for --commands


class UsageError(Exception):
    """A problem with the files or arguments: reported in one line, exit status 2."""


# ----------------------------------------------------------------------------- reading files

def load_json(path, what):
    try:
        with open(path) as f:
            return json.load(f)
    except FileNotFoundError:
        raise UsageError(f"{what} {path} not found")
    except (OSError, ValueError) as e:
        raise UsageError(f"{what} {path} is not readable JSON: {e}")


def has_format(doc, fmt, list_key):
    return isinstance(doc, dict) and doc.get("format") == fmt and isinstance(doc.get(list_key), list)


def row_key(row, path, index):
    """(zoo, model, batch, threads) of a record or baseline row, checked."""
    try:
        zoo, model, batch, threads = row["zoo"], row["model"], row["batch"], row["threads"]
    except (TypeError, KeyError) as e:
        raise UsageError(f"{path}: row {index} lacks {e}")
    if not (isinstance(zoo, str) and isinstance(model, str) and isinstance(batch, int)
            and isinstance(threads, int)):
        raise UsageError(f"{path}: row {index}: zoo and model must be strings, batch and threads integers")
    return zoo, model, batch, threads


def ratio_of(row, path, index):
    ratio = row.get("ratio")
    if isinstance(ratio, bool) or not isinstance(ratio, (int, float)) or not ratio > 0:
        raise UsageError(f"{path}: row {index} has no positive \"ratio\"")
    return float(ratio)


def load_baseline(path, missing_ok=False):
    """The baseline document and its rows by key; an empty one if missing_ok and absent."""
    if missing_ok and not os.path.exists(path):
        return {"format": BASELINE_FORMAT, "version": 1, "sources": {}, "rows": []}, {}
    doc = load_json(path, "baseline")
    if not has_format(doc, BASELINE_FORMAT, "rows"):
        raise UsageError(f"{path} is not a baseline file (format \"{BASELINE_FORMAT}\" with a \"rows\" list)")
    rows = {}
    for i, row in enumerate(doc["rows"]):
        key = row_key(row, path, i)
        ratio_of(row, path, i)
        if key in rows:
            raise UsageError(f"{path}: row {i} repeats {label(key)}")
        rows[key] = row
    return doc, rows


def load_runs(paths):
    """(ratios, failures, runs): key -> [ratio per run]; key -> error; the run documents."""
    ratios, failures, runs = {}, {}, []
    for path in paths:
        doc = load_json(path, "run")
        if not has_format(doc, RUN_FORMAT, "records"):
            raise UsageError(f"{path} is not a compare_ort.py --json file (format \"{RUN_FORMAT}\" "
                             "with a \"records\" list)")
        for i, rec in enumerate(doc["records"]):
            key = row_key(rec, path, i)
            if "error" in rec:
                failures[key] = str(rec["error"])
            else:
                ratios.setdefault(key, []).append(ratio_of(rec, path, i))
        runs.append(doc)
    return ratios, failures, runs


# ----------------------------------------------------------------------------- comparing

def label(key):
    zoo, model, batch, threads = key
    return f"{zoo}/{model} b{batch} t{threads}"


def check_overlap(base_rows, ratios, failures):
    """Raises the usage error for runs that share no row with the baseline."""
    run_keys = set(ratios) | set(failures)
    if not run_keys:
        raise UsageError("the runs hold no records")
    if run_keys & set(base_rows):
        return
    same_rows = {k[:3] for k in run_keys} & {k[:3] for k in base_rows}
    if same_rows:  # the same models and batches, measured at other thread counts
        run_threads = sorted({k[3] for k in run_keys if k[:3] in same_rows})
        base_threads = sorted({k[3] for k in base_rows if k[:3] in same_rows})
        raise UsageError(f"mismatched threads: the runs used {', '.join(map(str, run_threads))} "
                         f"thread(s), the baseline's rows for those models have "
                         f"{', '.join(map(str, base_threads))}")
    raise UsageError("no overlapping rows: the runs and the baseline share no (zoo, model, batch, threads)")


def compare(base_rows, ratios, failures, tolerance):
    """One result per key on either side: (key, baseline ratio, new ratio, change, status)."""
    results = []
    for key in sorted(set(base_rows) | set(ratios) | set(failures)):
        base = base_rows[key]["ratio"] if key in base_rows else None
        new = statistics.median(ratios[key]) if key in ratios else None
        change = new / base - 1.0 if base is not None and new is not None else None
        if key in failures and new is None:
            status = f"FAILED: {failures[key][:120]}"
        elif base is None:
            status = "not compared: not in the baseline"
        elif new is None:
            status = "not compared: not in the runs"
        elif change > tolerance + 1e-9:  # the epsilon keeps exactly +10.0% a pass
            status = "WORSE"
        else:
            status = "ok"
        results.append((key, base, new, change, status))
    return results


def is_flagged(status):
    return status == "WORSE" or status.startswith("FAILED")


def print_table(results, tolerance):
    print(f"| row | baseline ratio | new ratio | change | status (flagged when more than "
          f"{tolerance:.0%} worse) |")
    print("|---|---|---|---|---|")
    for key, base, new, change, status in results:
        cells = [f"{base:.3g}" if base is not None else "-", f"{new:.3g}" if new is not None else "-",
                 f"{change:+.1%}" if change is not None else "-"]
        print(f"| {label(key)} | {' | '.join(cells)} | {status} |")
    flagged = sum(is_flagged(r[4]) for r in results)
    compared = sum(r[3] is not None for r in results)
    skipped = sum(r[4].startswith("not compared") for r in results)
    print(f"\n{compared} compared, {flagged} flagged, {skipped} not compared.")
    return flagged


# ----------------------------------------------------------------------------- updating

def run_source(doc):
    """A source entry's name and text for one run document."""
    machine = doc.get("machine") or {}
    name = f"compare_ort.py run of {doc.get('date', 'an unknown date')}"
    text = (f"{machine.get('cpu', 'unknown CPU')}, {machine.get('cores', '?')} CPUs; commit "
            f"{doc.get('commit', 'unknown')}; ONNX Runtime {doc.get('ort_version', '?')}; "
            f"`{doc.get('command', 'unknown command')}`")
    return name, text


def update_baseline(doc, base_rows, runs):
    """The baseline with every row the runs measured (the median where several did) replaced."""
    new_rows = dict(base_rows)
    by_key = {}
    for run in runs:
        name, text = run_source(run)
        doc.setdefault("sources", {})[name] = text
        for i, rec in enumerate(run["records"]):
            if "error" not in rec:
                by_key.setdefault(row_key(rec, name, i), []).append((rec, name))
    for key, recs in by_key.items():
        ratios = [r["ratio"] for r, _ in recs]
        rec, name = recs[-1]
        row = {"zoo": key[0], "model": key[1], "batch": key[2], "threads": key[3],
               "ratio": round(statistics.median(ratios), 4), "rounds": rec.get("rounds")}
        if len(recs) == 1 and "ratio_min" in rec:
            row.update(ratio_min=round(rec["ratio_min"], 4), ratio_max=round(rec["ratio_max"], 4))
        row["source"] = name if len(recs) == 1 else [n for _, n in recs]  # a list: the median of those
        new_rows[key] = row
    used = set()
    for row in new_rows.values():  # drop the sources no row cites any more
        cited = row.get("source")
        used.update(cited if isinstance(cited, list) else [cited])
    doc["sources"] = {n: t for n, t in doc.get("sources", {}).items() if n in used}
    if all(n.startswith("compare_ort.py run of") for n in doc["sources"]):  # the seed's note is gone
        doc["source"] = ("compare_ort.py --json runs written by check_baseline.py --update; "
                         "\"sources\" gives each run's machine, commit and command.")
    doc["rows"] = [new_rows[k] for k in sorted(new_rows)]
    return doc, len(by_key)


def dump_baseline(doc, path):
    """The baseline as JSON with one row per line, so that a refresh reads as a small diff."""
    head = {k: v for k, v in doc.items() if k != "rows"}
    text = json.dumps(head, indent=2, ensure_ascii=False)[:-2]
    rows = ",\n".join("    " + json.dumps(r, ensure_ascii=False) for r in doc["rows"])
    with open(path, "w") as f:
        f.write(f"{text},\n  \"rows\": [\n{rows}\n  ]\n}}\n")


# ----------------------------------------------------------------------------- commands

def measure_commands(base_rows, out_dir="build/ort-check"):
    """compare_ort.py commands that measure every baseline row, one per zoo, threads and model set."""
    groups = {}  # (zoo, threads) -> batch -> models, in the baseline's order
    rounds = {}
    for (zoo, model, batch, threads), row in base_rows.items():
        groups.setdefault((zoo, threads), {}).setdefault(batch, []).append(model)
        rounds[(zoo, threads)] = max(rounds.get((zoo, threads), 0), row.get("rounds") or 3)
    lines = []
    for (zoo, threads), batches in sorted(groups.items()):
        by_models = {}
        for batch, models in sorted(batches.items()):
            by_models.setdefault(tuple(models), []).append(str(batch))
        for models, batch_list in by_models.items():
            out = f"{out_dir}/{zoo}.t{threads}.b{'-'.join(batch_list)}.json"
            lines.append("PYTHONPATH=build/onnxruntime-python /usr/bin/python3 tools/bench/compare_ort.py "
                         f"--zoo {ZOO_DIRS.get(zoo, zoo)} --models {','.join(models)} "
                         f"--batches {','.join(batch_list)} --threads {threads} "
                         f"--rounds {rounds[(zoo, threads)]} --json {out}")
    return lines


# ----------------------------------------------------------------------------- main

def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("runs", nargs="*", metavar="RUN.json", help="compare_ort.py --json files")
    ap.add_argument("--baseline", default=DEFAULT_BASELINE, help="the baseline file (default: %(default)s)")
    ap.add_argument("--tolerance", type=float, default=0.10,
                    help="flag a row whose ratio grew by more than this fraction (default: %(default)s)")
    ap.add_argument("--update", action="store_true",
                    help="write the runs' rows into the baseline (after printing the comparison)")
    ap.add_argument("--commands", action="store_true",
                    help="print the compare_ort.py commands that measure the baseline's rows, then exit")
    args = ap.parse_args(argv)
    if args.tolerance < 0:
        raise UsageError("--tolerance must be >= 0")
    if not args.runs and not args.commands:
        raise UsageError("name at least one RUN.json (compare_ort.py --json), or give --commands")
    return args


def main(argv=None):
    try:
        args = parse_args(argv)
        doc, base_rows = load_baseline(args.baseline, missing_ok=args.update)
        if args.commands:
            print("\n".join(measure_commands(base_rows)))
            return 0
        ratios, failures, runs = load_runs(args.runs)
        if not args.update:
            check_overlap(base_rows, ratios, failures)
    except UsageError as e:
        print(f"check_baseline: {e}", file=sys.stderr)
        return 2
    flagged = print_table(compare(base_rows, ratios, failures, args.tolerance), args.tolerance)
    if args.update:
        doc, count = update_baseline(doc, base_rows, runs)
        dump_baseline(doc, args.baseline)
        print(f"Updated {args.baseline}: {count} row(s) from the runs, {len(doc['rows'])} in all.")
        return 0
    return 1 if flagged else 0


if __name__ == "__main__":
    sys.exit(main())
