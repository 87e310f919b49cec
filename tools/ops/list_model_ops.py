#!/usr/bin/python3
"""List the distinct aten:: ops that real models put in front of switchyard.

Traces (random weights, nothing downloaded, small inputs) every torchvision classification
model that traces, every torch.nn layer that runs at inference, a broad sample of the
torch.nn.functional / torch API, a few sequence models written the way users write them
(nn.Transformer, LSTM/GRU/RNN nets, a Hugging Face-style BERT block, a Llama-style decoder
block) and the ops the importer emits when it makes in-place writes through views
functional. Each entry is traced twice in eval mode, with grad enabled and under
torch.no_grad() (PyTorch takes fused fast paths under no_grad), and each trace is prepared
the way switchyard's importer does (host/torchscript/importer.cpp): torch.jit.freeze,
inlining, mutation removal, constant propagation, dead code elimination. The op list is
the union of aten:: node kinds in those graphs, with how many entries use each op.

Each op is marked
  tensor  - takes/returns tensors: a kernel must run it (the aten plugin at least);
  scalar  - returns no tensor (aten::size, aten::Int, int arithmetic): the host's own
            shape/scalar evaluation runs it, no plugin kernel is needed;
  python  - prim::PythonOp, a Python autograd.Function in the trace: no importer can run it;
whether the aten plugin has a kernel for it (read from its table, plugins/aten/ops_*.cpp),
and which family plugins list a kernel for it (`switchyard plugins --kernels` of a build).

Run with Debian's python (torch 1.13, torchvision 0.14):
    /usr/bin/python3 tools/ops/list_model_ops.py                 # everything, text table
    /usr/bin/python3 tools/ops/list_model_ops.py --missing       # tensor ops aten lacks
    /usr/bin/python3 tools/ops/list_model_ops.py --group nn,functional --format markdown
    /usr/bin/python3 tools/ops/list_model_ops.py --skip-large --json ops.json
Tracing all 80 torchvision models (each in its own process) takes 12-25 minutes on 2 busy
cores; --skip-large leaves out the ones over 150M parameters (their op sets equal their
smaller siblings'). --json saves a run; --from-json reprints it (e.g. after adding kernels)
without tracing again.
"""
import argparse
import collections
import json
import multiprocessing
import os
import re
import subprocess
import sys
import time
import warnings

try:
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
except ImportError:
    print("list_model_ops.py: needs torch and torchvision; run it with Debian's /usr/bin/python3",
          file=sys.stderr)
    sys.exit(77)  # CTest's skip code (tests/plugins/aten/CMakeLists.txt)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tools/ops/ -> the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from list_model_ops_catalog import functional_entries, nn_entries, sequence_entries  # noqa: E402

GROUPS = ("torchvision", "nn", "functional", "sequence")
LARGE_PARAMS = 150e6


# ---- the torchvision classification models ------------------------------------------------

def torchvision_entries():
    import torchvision.models as tvm

    out = []
    for name in tvm.list_models(module=tvm):
        def make(name=name):
            kwargs = {"weights": None}
            if name in ("googlenet", "inception_v3"):
                kwargs["init_weights"] = False  # scipy-free and fast; ops are the same
            return tvm.get_model(name, **kwargs)

        # Smallest input each family takes (vit and maxvit fix 224 in their weights/layout).
        size = 224 if name.startswith(("vit_", "maxvit")) else 96 if name == "inception_v3" else 64
        out.append((name, make, lambda size=size: (torch.randn(1, 3, size, size),)))
    return out


# ---- tracing as the importer does ---------------------------------------------------------

SCHEMAS = collections.defaultdict(set)  # op -> overload schemas seen in the current entry


def graph_ops(graph):
    """aten:: node kinds in `graph` (blocks included) -> 'tensor' or 'scalar'."""
    ops = {}

    def visit(block):
        for n in block.nodes():
            for b in n.blocks():
                visit(b)
            kind = n.kind()
            if kind == "prim::PythonOp":  # a Python autograd.Function: nothing can run it
                ops[kind] = "python"
                continue
            if not kind.startswith("aten::"):
                continue
            try:
                SCHEMAS[kind].add(n.schema())
            except RuntimeError:
                pass
            tensorish = any(isinstance(o.type(), torch._C.TensorType) or
                            (isinstance(o.type(), torch._C.ListType) and
                             isinstance(o.type().getElementType(), torch._C.TensorType))
                            for o in n.outputs())
            if tensorish or ops.get(kind) != "tensor":
                ops[kind] = "tensor" if tensorish else ops.get(kind, "scalar")

    visit(graph)
    return ops


def trace_ops(module, inputs, no_grad):
    module = module.eval()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if no_grad:
            with torch.no_grad():
                traced = torch.jit.trace(module, inputs, check_trace=False)
        else:
            traced = torch.jit.trace(module, inputs, check_trace=False)
        frozen = torch.jit.freeze(traced.eval())
    graph = frozen.graph
    torch._C._jit_pass_inline(graph)
    torch._C._jit_pass_remove_mutation(graph)
    torch._C._jit_pass_constant_propagation(graph)
    torch._C._jit_pass_dce(graph)
    return graph_ops(graph)


def entry_ops(make, inputs_fn, skip_large=False):
    """{op: kind} of one catalog entry, and {op: schemas}; None if skipped as large."""
    torch.manual_seed(0)
    SCHEMAS.clear()
    module = make()
    if not isinstance(module, nn.Module):
        raise TypeError("catalog entry did not build an nn.Module")
    if skip_large and sum(x.numel() for x in module.parameters()) > LARGE_PARAMS:
        return None
    ops = {}
    for no_grad in (False, True):
        for k, v in trace_ops(module, inputs_fn(), no_grad).items():
            if v == "tensor" or k not in ops:
                ops[k] = v
    return ops, {k: set(v) for k, v in SCHEMAS.items()}


def in_child(fn):
    """fn() in a forked process: TorchScript keeps every traced and frozen graph (weights
    included) alive for the life of the process, so 80 models would not fit in memory.
    Forked before the parent has run any parallel region, so OpenMP stays usable."""
    ctx = multiprocessing.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)

    def child():
        try:
            send.send(("ok", fn()))
        except BaseException as e:  # noqa: B902 - reported to the parent
            send.send(("error", "%s: %s" % (type(e).__name__, str(e).strip().split("\n")[0][:300])))
        finally:
            send.close()

    proc = ctx.Process(target=child)
    proc.start()
    send.close()
    try:
        status, value = recv.recv()
    except EOFError:
        status, value = "error", None
    proc.join()
    if status != "ok":
        raise RuntimeError(value or "the tracing process died (exit code %s; out of memory?)" % proc.exitcode)
    return value


# ---- which plugins run an op ---------------------------------------------------------------

def aten_table(root):
    """'aten::op' names of the aten plugin's table, read from its sources (no build needed)."""
    ops = set()
    folder = os.path.join(root, "plugins", "aten")
    for f in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
        if f.startswith("ops_") and f.endswith(".cpp"):
            text = open(os.path.join(folder, f), encoding="utf-8").read()
            for m in re.finditer(r'(?:r\.def\(\s*|SY_(?:UNARY|BINARY)\()"?([A-Za-z_0-9]+)', text):
                if not m.group(1).isupper():  # not the macros' own parameter names
                    ops.add("aten::" + m.group(1))
    return ops


def family_kernels(switchyard):
    """{plugin: set of 'aten::op'} of the other built plugins, from `switchyard plugins -k`
    (fused kernels such as conv2d+relu are left out: the plugin lists the plain op too)."""
    if not switchyard or not os.access(switchyard, os.X_OK):
        return None
    try:
        text = subprocess.run([switchyard, "plugins", "--kernels"], capture_output=True, text=True,
                              timeout=120, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    tables, plugin = {}, None
    for line in text.splitlines():
        if line and not line.startswith(" ") and not line.startswith("-"):
            plugin = line.split()[0]
        elif plugin and plugin not in ("aten", "example") and line.startswith("  aten::"):
            op = line.split()[0]
            if "+" not in op:
                tables.setdefault(plugin, set()).add(op)
    return tables


def aten_overloads(root):
    """{'aten::op': set of overload names} of the aten plugin's table ('' = the plain one)."""
    out = collections.defaultdict(set)
    folder = os.path.join(root, "plugins", "aten")
    for f in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
        if f.startswith("ops_") and f.endswith(".cpp"):
            text = open(os.path.join(folder, f), encoding="utf-8").read()
            for m in re.finditer(r'r\.def\(\s*"([A-Za-z_0-9]+)(?:\.([A-Za-z_0-9]+))?\(', text):
                out["aten::" + m.group(1)].add(m.group(2) or "")
            for m in re.finditer(r'SY_(?:UNARY|BINARY)\(([a-z_0-9]+)', text):
                out["aten::" + m.group(1)].add("")
    return out


def overload_of(schema):
    head = schema.split("(", 1)[0]
    return head.split(".", 1)[1] if "." in head else ""


# ---- main ------------------------------------------------------------------------------------

def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="\n".join(__doc__.split("\n")[1:]))
    p.add_argument("--group", default=",".join(GROUPS),
                   help="comma-separated groups to trace: %s (default: all)" % ", ".join(GROUPS))
    p.add_argument("--only", metavar="REGEX", help="trace only entries whose name matches")
    p.add_argument("--skip-large", action="store_true",
                   help="skip torchvision models over 150M parameters")
    p.add_argument("--format", choices=("text", "markdown"), default="text")
    p.add_argument("--json", metavar="FILE", help="also write {op: {kind, users, schemas, ...}} as JSON")
    p.add_argument("--from-json", metavar="FILE", help="report on a saved --json run instead of tracing")
    p.add_argument("--missing", action="store_true",
                   help="print only the tensor ops that the aten plugin has no kernel for")
    p.add_argument("--fail-on-missing", action="store_true",
                   help="exit 1 if an entry fails to trace or uses a tensor op the aten plugin lacks")
    p.add_argument("--overloads", action="store_true",
                   help="print the traced overloads whose name the aten table lacks (a table line may "
                        "still cover one through defaults: check the binding before adding a line)")
    p.add_argument("--users", action="store_true", help="list every op's users (entry names)")
    p.add_argument("--schemas", action="store_true", help="list the overload schemas each op was traced with")
    p.add_argument("--switchyard", metavar="BIN", default=os.path.join(ROOT, "build", "bin", "switchyard"),
                   help="switchyard binary whose `plugins --kernels` fills the family-plugin column "
                        "(default: build/bin/switchyard)")
    p.add_argument("-v", "--verbose", action="store_true", help="print each entry as it is traced")
    args = p.parse_args()

    groups = [g.strip() for g in args.group.split(",") if g.strip()]
    for g in groups:
        if g not in GROUPS:
            p.error("unknown group '%s' (known: %s)" % (g, ", ".join(GROUPS)))
    torch.set_num_threads(max(1, min(4, os.cpu_count() or 1)))
    warnings.simplefilter("ignore")  # deprecation notes from tracing; only the ops matter

    entries = []
    for g in groups:
        if g == "torchvision":
            entries += [("torchvision/" + n, m, i, True) for n, m, i in torchvision_entries()]
        else:
            source = {"nn": nn_entries, "functional": functional_entries, "sequence": sequence_entries}[g]
            entries += [(g + "/" + n, m, i, False) for n, m, i in source()]
    if args.only:
        entries = [e for e in entries if re.search(args.only, e[0])]

    users = collections.defaultdict(set)
    kinds = {}
    failed, skipped = [], []
    all_schemas = collections.defaultdict(set)
    t0 = time.time()
    if args.from_json:
        entries = []
        with open(args.from_json) as f:
            for op, info in json.load(f).items():
                users[op] = set(u for u in info["users"] if not args.only or re.search(args.only, u))
                if not users[op]:
                    del users[op]
                    continue
                kinds[op] = info["kind"]
                all_schemas[op] = set(info.get("schemas", []))
    for name, make, inputs_fn, isolate in entries:
        t = time.time()
        try:
            if isolate:
                result = in_child(lambda: entry_ops(make, inputs_fn, args.skip_large))
            else:
                result = entry_ops(make, inputs_fn)
        except Exception as e:  # an entry that does not trace is reported, not fatal
            failed.append((name, str(e).strip().split("\n")[0][:200]))
            continue
        if result is None:
            skipped.append(name)
            continue
        ops, schemas = result
        for op, seen in schemas.items():
            all_schemas[op] |= seen
        for op, kind in ops.items():
            users[op].add(name)
            if kind == "tensor" or op not in kinds:
                kinds[op] = kind
        if args.verbose:
            print("%-45s %3d ops  %.1fs" % (name, len(ops), time.time() - t), file=sys.stderr)

    aten = aten_table(ROOT)
    tables = family_kernels(args.switchyard)
    if tables is None:
        print("note: no family-plugin column (build switchyard or pass --switchyard)", file=sys.stderr)
        tables = {}
    rows = sorted(users, key=lambda op: (-len(users[op]), op))
    if args.missing:
        rows = [op for op in rows if kinds[op] == "tensor" and op not in aten]

    def families(op):
        return ",".join(n for n in sorted(tables) if op in tables[n])

    if args.overloads:
        table = aten_overloads(ROOT)
        for op in rows:
            for schema in sorted(all_schemas[op]):
                if op in table and overload_of(schema) not in table[op]:
                    print("%-40s %s" % (op, schema))
        rows = []

    if args.format == "markdown" and rows:
        print("| op | users | kind | aten | family plugins |")
        print("|----|------:|------|:----:|----------------|")
        for op in rows:
            print("| `%s` | %d | %s | %s | %s |" % (op, len(users[op]), kinds[op],
                                                  "yes" if op in aten else ("-" if kinds[op] == "scalar" else "**no**"),
                                                  families(op)))
    else:
        for op in rows:
            mark = "yes" if op in aten else ("-" if kinds[op] == "scalar" else "NO")
            line = "%-40s %4d  %-6s aten:%-3s %s" % (op, len(users[op]), kinds[op], mark, families(op))
            print(line.rstrip())
            if args.users:
                print("      " + " ".join(sorted(users[op])))
            if args.schemas:
                for schema in sorted(all_schemas[op]):
                    print("      " + schema)

    tensor_ops = [op for op in users if kinds[op] == "tensor"]
    n_entries = len(set().union(*users.values())) if users else 0
    n_aten = sum(op.startswith("aten::") for op in users)
    print("\n%d entries %s, %d failed; %d distinct aten ops (%d tensor, %d scalar); "
          "aten plugin has %d ops, covers %d of the %d tensor ops"
          % (n_entries, ("read from " + args.from_json) if args.from_json else "traced in %.0fs" % (time.time() - t0),
             len(failed), n_aten, len(tensor_ops), n_aten - len(tensor_ops), len(aten),
             sum(op in aten for op in tensor_ops), len(tensor_ops)), file=sys.stderr)
    if "prim::PythonOp" in users:
        print("  Python autograd.Functions in the trace (no importer runs them): "
              + " ".join(sorted(users["prim::PythonOp"])), file=sys.stderr)
    for name, why in failed:
        print("  did not trace: %s: %s" % (name, why), file=sys.stderr)
    if skipped:
        print("  skipped as large (--skip-large): " + " ".join(skipped), file=sys.stderr)

    if args.json:
        with open(args.json, "w") as f:
            json.dump({op: {"kind": kinds[op], "users": sorted(users[op]), "aten": op in aten,
                            "schemas": sorted(all_schemas[op]),
                            "families": [n for n in sorted(tables) if op in tables[n]]}
                       for op in sorted(users)}, f, indent=1)
    missing = sorted(op for op in tensor_ops if op not in aten)
    if args.fail_on_missing and (missing or failed):
        print("FAIL: %d tensor ops without an aten kernel%s; %d entries did not trace"
              % (len(missing), (": " + " ".join(missing)) if missing else "", len(failed)), file=sys.stderr)
        return 1

    return 0


if __name__ == "__main__":
    sys.exit(main())
