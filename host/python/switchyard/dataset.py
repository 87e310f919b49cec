"""A model over a dataset: one output file (and one node_io file) per sample, the files the
CLI's `switchyard run MODEL --inputs-dir DIR --save-outputs OUT` writes, in this process or
on the workers of a Dask cluster (Debian's python3-distributed; see docs/python.md).

    from distributed import Client
    client = Client("tcp://scheduler:8786")        # or Client(LocalCluster(...)); None: this process
    switchyard.run_dataset("resnet18.pt", "images/", "out/", client=client,
                           node_io="outputs", nodes=["layer4.*", "fc"])

Each worker loads the model once and keeps it. A task is one batch of samples; it writes
each sample's node_io file, then its output file, each under a temporary name renamed into
place, so a worker that dies leaves no partial file, and a retried task writes only the
samples its dead predecessor did not. Nothing here imports Dask until a client is passed.
"""
import dataclasses
import fnmatch
import json
import os
import sys
import threading
import time

import torch

__all__ = ["run_dataset", "DatasetRun"]

_TENSOR_FILES = (".pt", ".pth", ".json")
_OUT = ".pt"
_NODE_IO = ".node_io.pt"


# ---- what a run reports ------------------------------------------------------------

@dataclasses.dataclass
class DatasetRun:
    """What run_dataset did: samples run, already done (resume), failed, bytes and time."""
    total: int = None              # samples in the dataset; None for an iterable without len()
    run: int = 0                   # samples written by this run
    already_done: int = 0          # samples whose output file was there already (resume)
    failed: list = dataclasses.field(default_factory=list)  # (sample, error message)
    bytes_written: int = 0         # output and node_io files of the samples run
    seconds: float = 0.0
    out_dir: str = ""

    @property
    def bytes_per_sample(self):
        return self.bytes_written / self.run if self.run else 0.0

    @property
    def samples_per_second(self):
        return self.run / self.seconds if self.seconds > 0 else 0.0

    def __str__(self):
        seen = self.run + self.already_done + len(self.failed)
        total = seen if self.total is None else self.total
        return (f"dataset: {total} sample(s): {self.run} run, {self.already_done} already done (resume), "
                f"{len(self.failed)} failed; {self.seconds:.2f} s, {self.samples_per_second:.1f} samples/s, "
                f"{_size(self.bytes_per_sample)} per sample")


@dataclasses.dataclass
class _Result:
    """One sample's fate in a task: "run" (written), "done" (already there) or "failed"."""
    index: int
    label: str
    status: str
    bytes: int = 0
    kind: str = ""       # the switchyard error class, e.g. "InputError"
    message: str = ""
    fatal: bool = False  # the model itself failed: the run stops whatever on_error says


# ---- the job and its samples -------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class _Job:
    """What every task needs (sent with each): the model, how to run it, where to write."""
    model: str
    config: str
    plugin_paths: tuple
    out_dir: str
    node_io: str
    nodes: tuple


@dataclasses.dataclass
class _Sample:
    index: int
    name: str            # its files are <name>.pt and <name>.node_io.pt
    source: object       # a file path, or a tuple of tensors
    done: bool = False   # its output file is there: it runs with its batch but is not written

    @property
    def label(self):
        return self.source if isinstance(self.source, str) else f"#{self.index} ({self.name})"


def _list_samples(inputs):
    """(samples as (name, source), count or None): a folder's tensor files (as the CLI lists
    them), a list of files, or an iterable of tensors (or tuples of tensors, one per input)."""
    if isinstance(inputs, (str, os.PathLike)):
        return _file_samples(_folder_files(os.fspath(inputs)))
    if isinstance(inputs, (list, tuple)) and inputs and all(isinstance(p, (str, os.PathLike)) for p in inputs):
        return _file_samples([os.fspath(p) for p in inputs])
    count = len(inputs) if hasattr(inputs, "__len__") else None
    return ((f"sample_{i:06d}", _as_tuple(x)) for i, x in enumerate(inputs)), count


def _folder_files(folder):
    from . import IoError
    if not os.path.isdir(folder):
        raise IoError(f"inputs {folder}: not a folder")
    files = sorted(os.path.join(folder, f) for f in os.listdir(folder)
                   if f.endswith(_TENSOR_FILES) and not f.startswith(".")
                   and os.path.isfile(os.path.join(folder, f)))
    if not files:
        raise IoError(f"inputs {folder}: no .pt, .pth or .json files in it")
    return files


def _file_samples(paths):
    from . import InputError
    by_name = {}
    for path in paths:
        name = os.path.splitext(os.path.basename(path))[0]
        if name in by_name:
            raise InputError(f"samples {by_name[name]} and {path} would both write {name}{_OUT}: rename one")
        by_name[name] = os.path.abspath(path)
    return list(by_name.items()), len(by_name)


def _as_tuple(x):
    return (x,) if isinstance(x, torch.Tensor) else tuple(x)


def _batches(samples, batch_size, done):
    """Consecutive groups of batch_size samples. A sample's batch depends on its position
    only, so its outputs are the same bits in a resumed run or after a worker died."""
    batch = []
    for index, (name, source) in enumerate(samples):
        batch.append(_Sample(index, name, source, name in done))
        if len(batch) == batch_size:
            yield batch
            batch = []
    if batch:
        yield batch


# ---- files -------------------------------------------------------------------------

def _partial(name):
    return name.startswith(".") and ".partial." in name


def _remove_partials(out_dir):
    """Removes temporaries a killed writer left (none is being written when this runs)."""
    stale = [f for f in os.listdir(out_dir) if _partial(f)]
    for f in stale:
        os.remove(os.path.join(out_dir, f))
    return len(stale)


def _done_names(out_dir):
    return {f[:-len(_OUT)] for f in os.listdir(out_dir)
            if f.endswith(_OUT) and not f.endswith(_NODE_IO) and not f.startswith(".")}


def _remove_outputs(out_dir, name):
    for ext in (_OUT, _NODE_IO):
        try:
            os.remove(os.path.join(out_dir, name + ext))
        except FileNotFoundError:
            pass


def _publish(tmp, path):
    os.replace(tmp, path)


def _write_atomically(value, path):
    """torch.save to a hidden temporary beside `path` (named .<stem>.partial.*, as the
    CLI's), renamed into place when whole. Returns the file's size."""
    folder, base = os.path.split(path)
    stem, ext = base[:-len(_OUT)], _OUT
    tmp = os.path.join(folder, f".{stem}.partial.{os.getpid()}-{threading.get_ident()}{ext}")
    try:
        torch.save(value, tmp)
        size = os.path.getsize(tmp)
        _publish(tmp, path)
        return size
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise


def _read_sample(source, model):
    """A sample's input tensors, in the model's input order."""
    from . import InputError, IoError
    if not isinstance(source, str):
        return source
    if source.endswith(".json"):
        return _read_json(source, model)
    try:
        value = torch.load(source, weights_only=True)
    except Exception as e:
        raise IoError(f"{source}: not a tensor file written by torch.save ({str(e).splitlines()[0]}). "
                      "Save one tensor or a tuple: torch.save((x, y), path)") from None
    if isinstance(value, torch.Tensor):
        value = (value,)
    if not isinstance(value, (tuple, list)) or not all(isinstance(t, torch.Tensor) for t in value):
        raise IoError(f"{source}: holds {type(value).__name__}, not a tensor or a tuple of tensors. "
                      "Save one: torch.save((x, y), path)")
    if len(value) != len(model.inputs):
        names = ", ".join(i["name"] for i in model.inputs)
        raise InputError(f"{source}: holds {len(value)} tensor(s); the model takes {len(model.inputs)} "
                         f"input(s) ({names}). Save them in order: torch.save((x, ...), path)")
    return tuple(value)


def _read_json(path, model):
    """The CLI's JSON tensor file: {"x": {"dtype": "float32", "shape": [2, 8], "data": [...]}}."""
    from . import InputError, IoError
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        raise IoError(f"{path}: not valid JSON: {e}") from None
    tensors = []
    for spec in model.inputs:
        entry = doc.get(spec["name"]) if isinstance(doc, dict) else None
        if entry is None:
            raise InputError(f"{path}: no entry for model input '{spec['name']}'")
        try:
            dtype = getattr(torch, entry["dtype"])
            tensors.append(torch.tensor(entry["data"], dtype=dtype).reshape(entry["shape"]))
        except (KeyError, AttributeError, TypeError, RuntimeError) as e:
            raise InputError(f"{path}: input '{spec['name']}': {e}") from None
    return tuple(tensors)


# ---- a task, on a worker -----------------------------------------------------------

_MODELS = {}
_MODELS_LOCK = threading.Lock()


def _model(job):
    """This process's copy of the model: loaded by the first task, kept for every later one."""
    from . import Runtime
    key = (job.model, job.config, job.plugin_paths)
    with _MODELS_LOCK:
        if key not in _MODELS:
            runtime = Runtime(config=job.config, plugin_paths=job.plugin_paths)
            _MODELS[key] = (runtime, runtime.load(job.model))
        return _MODELS[key][1]


def _failure(sample, error, fatal=False):
    from . import Error
    kind = type(error).__name__ if isinstance(error, Error) else "Error"
    return _Result(sample.index, sample.label, "failed", kind=kind, message=str(error), fatal=fatal)


def _run_batch(job, batch):
    """A task: runs one batch and writes every sample whose output file is not there yet.
    Never raises for a sample: each gets a _Result."""
    try:
        model = _model(job)
    except Exception as e:  # the model itself: every sample would fail the same way
        return [_failure(s, e, fatal=True) for s in batch]
    for s in batch:
        s.done = s.done or os.path.exists(os.path.join(job.out_dir, s.name + _OUT))
    if all(s.done for s in batch):
        return [_Result(s.index, s.label, "done") for s in batch]
    results, ready = {}, []
    for s in batch:
        try:
            ready.append((s, _read_sample(s.source, model)))
        except Exception as e:
            results[s.index] = _Result(s.index, s.label, "done") if s.done else _failure(s, e)
    for s, outcome in _run_samples(model, job, ready):
        results[s.index] = _write_sample(job, s, outcome)
    return [results[s.index] for s in batch]


def _run_samples(model, job, ready):
    """[(sample, (outputs, records) or an error)]: the samples run as one batch; if that
    fails and there are several, each alone, so an error names the sample that causes it."""
    if not ready:
        return []
    try:
        return list(zip([s for s, _ in ready], _run_together(model, job, [x for _, x in ready])))
    except Exception as e:
        if len(ready) == 1:
            return [(ready[0][0], e)]
    alone = []
    for s, x in ready:
        try:
            alone.append((s, _run_together(model, job, [x])[0]))
        except Exception as e:
            alone.append((s, e))
    return alone


def _run_together(model, job, inputs):
    """Runs samples concatenated along dimension 0 (the batch); per sample, its outputs and
    its node_io records."""
    sizes = [x[0].shape[0] if x and x[0].dim() > 0 else 1 for x in inputs]
    batch = inputs[0] if len(inputs) == 1 else [torch.cat(parts) for parts in zip(*inputs)]
    result = _run_warm(model, job, batch)
    outputs, io = result if job.node_io else (result, None)
    per_sample, start = [], 0
    for size in sizes:
        take = _Slicer(start, size, sum(sizes))
        records = None if io is None else _records(io, take, job.nodes)
        per_sample.append((tuple(take(t) for t in outputs), records))
        start += size
    return per_sample


_WARM = set()  # (model, node_io, input shapes and dtypes) this process has run before


def _run_warm(model, job, batch):
    """model.run on a plan that has run before. A plan's first run can differ from its
    later ones in the last bits (the conv plugin's Winograd convolutions do), so without
    this a sample's outputs would depend on whether it came first to its worker: the first
    batch of each shape runs twice."""
    key = (job.model, job.config, job.plugin_paths, job.node_io,
           tuple((tuple(t.shape), t.dtype) for t in batch))
    if key not in _WARM:
        model.run(*batch, node_io=job.node_io)
        _WARM.add(key)
    return model.run(*batch, node_io=job.node_io)


def _write_sample(job, sample, outcome):
    """The node_io file first, the output file last: an output file means a whole sample."""
    if sample.done:
        return _Result(sample.index, sample.label, "done")
    if isinstance(outcome, Exception):
        return _failure(sample, outcome)
    outputs, records = outcome
    try:
        written = 0
        if records is not None:
            written += _write_atomically(records, os.path.join(job.out_dir, sample.name + _NODE_IO))
        written += _write_atomically(outputs, os.path.join(job.out_dir, sample.name + _OUT))
    except Exception as e:
        return _failure(sample, e)
    return _Result(sample.index, sample.label, "run", bytes=written)


class _Slicer:
    """One sample's part of a batch's tensors: rows [start, start + size) of each tensor whose
    first dimension is the batch's, other tensors (weights, constants) whole. Every copy is
    compact, and a tensor met twice (one node's output, the next one's input) is copied
    once, so torch.save stores it once."""

    def __init__(self, start, size, total):
        self.start, self.size, self.total = start, size, total
        self.copies = {}

    def __call__(self, t):
        if t is None:
            return None
        key = (t.data_ptr(), tuple(t.shape), t.stride(), t.dtype)
        if key not in self.copies:
            self.copies[key] = self._take(t)
        return self.copies[key]

    def _take(self, t):
        if self.total > 1 and t.dim() > 0 and t.shape[0] == self.total:
            return t[self.start:self.start + self.size].clone()
        return t if _compact(t) else t.clone()


def _compact(t):
    storage = t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage()
    return t.storage_offset() == 0 and storage.nbytes() == t.numel() * t.element_size()


def _records(io, take, nodes):
    """The node_io file's dict (docs/python.md, as the CLI writes it), selected nodes only."""
    return {node: {"op": r["op"], "backend": r["backend"], "module_path": r["module"],
                   "input_sources": list(r["input_sources"]),
                   "inputs": [take(t) for t in r["inputs"]],
                   "outputs": [take(t) for t in r["outputs"]]}
            for node, r in io.items() if _selected(node, r["module"], nodes)}


def _selected(node, module, nodes):
    return not nodes or any(fnmatch.fnmatchcase(node, p) or fnmatch.fnmatchcase(module, p) for p in nodes)


# ---- where tasks run ---------------------------------------------------------------

class _InProcess:
    """Runs each batch here, one after another: the single-process run."""

    def results(self, job, batches):
        for batch in batches:
            yield _run_batch(job, batch)

    def cancel(self):
        pass


class _OnDask:
    """Submits batches to a Dask client as workers free up (a few per worker thread in
    flight, so an iterable of tensors is never held whole) and yields results as they
    complete. The scheduler reruns the task of a worker that dies."""

    def __init__(self, client):
        self.client = client
        self.futures = set()
        self._threads, self._asked = 1, 0.0

    def results(self, job, batches):
        from distributed import as_completed
        pending = as_completed()
        batches = iter(batches)
        self._fill(pending, job, batches)
        for future in pending:
            results = future.result()
            self.futures.discard(future)
            future.release()
            self._fill(pending, job, batches)
            yield results

    def _fill(self, pending, job, batches):
        while pending.count() < 2 * self._worker_threads() + 2:
            batch = next(batches, None)
            if batch is None:
                return
            future = self.client.submit(_run_batch, job, batch, pure=False,
                                        key=f"switchyard-batch-{batch[0].index}-{os.urandom(4).hex()}")
            self.futures.add(future)
            pending.add(future)

    def _worker_threads(self):
        if time.monotonic() - self._asked > 5:  # workers come and go (adaptive clusters)
            self._threads = max(1, sum(self.client.nthreads().values()))
            self._asked = time.monotonic()
        return self._threads

    def cancel(self):
        if self.futures:
            self.client.cancel(list(self.futures))


# ---- progress ------------------------------------------------------------------------

def _size(n):
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.2f} {unit}"
        n /= 1000


def _clock(seconds):
    s = int(seconds + 0.5)
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


class _ProgressLine:
    """One line on stderr for the whole run, rewritten in place, when stderr is a terminal:
    done/total, samples/s, ETA and bytes per sample."""

    def __init__(self, run, enabled):
        self.run, self.start, self.shown = run, time.monotonic(), 0.0
        self.on = enabled and sys.stderr.isatty()

    def update(self, force=False):
        now = time.monotonic()
        if not self.on or (now - self.shown < 0.1 and not force):
            return
        self.shown, r = now, self.run
        seen = r.run + r.already_done + len(r.failed)
        rate = r.run / (now - self.start) if now > self.start else 0.0
        total = "" if r.total is None else f"/{r.total}"
        eta = (f"  ETA {_clock((r.total - seen) / rate)}" if rate > 0 else "  ETA ?") if r.total else ""
        sys.stderr.write(f"\r\033[K{seen}{total}  {rate:.1f} samples/s{eta}  {_size(r.bytes_per_sample)}/sample")
        sys.stderr.flush()

    def clear(self):
        if self.on:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()


# ---- the run -----------------------------------------------------------------------

def run_dataset(model, inputs, out_dir, *, client=None, config=None, plugin_paths=(), batch_size=1,
                node_io=None, nodes=None, on_error="stop", resume=True, progress=True):
    """Runs `model` (a .pt, .pt2 or .json file every worker can read) over `inputs` and writes,
    per sample, `<out_dir>/<name>.pt` (the outputs, a tuple of tensors) and, with node_io,
    `<name>.node_io.pt` (a dict keyed by node name), as `switchyard run --inputs-dir` does.

    inputs: a folder (its .pt, .pth and .json files, named by their stem), a list of such
    files, or an iterable of tensors or tuples of tensors (named sample_000000, ...).
    client: a distributed.Client (a LocalCluster's or a remote scheduler's); None runs here.
    config, plugin_paths: as switchyard.Runtime takes them, on every worker.
    batch_size: samples per model run and per task, concatenated along dimension 0.
    node_io: None, "outputs" (each node's outputs) or "all" (inputs too).
    nodes: keep only these nodes' records: glob patterns on node names or module paths.
    on_error: "stop" raises the first failing sample's error, naming it; "skip" goes on
    and lists the failed samples in the result.
    resume: skip samples whose output file is there; False removes a sample's earlier
    files and runs it again.
    progress: a progress line on stderr (on a terminal) and the summary on stdout.

    Returns a DatasetRun. Ctrl-C stops the run; what was written stays, and resume goes on.
    """
    _check_arguments(batch_size, node_io, on_error)
    job = _Job(os.path.abspath(os.fspath(model)), None if config is None else os.path.abspath(os.fspath(config)),
               tuple(os.path.abspath(os.fspath(p)) for p in plugin_paths), os.path.abspath(os.fspath(out_dir)),
               node_io, tuple([nodes] if isinstance(nodes, str) else nodes or ()))
    samples, total = _list_samples(inputs)
    os.makedirs(job.out_dir, exist_ok=True)
    stale = _remove_partials(job.out_dir)
    if stale and progress:
        print(f"removed {stale} incomplete file(s) left by an interrupted run")
    done = _done_names(job.out_dir) if resume else set()
    run = DatasetRun(total=total, out_dir=job.out_dir)
    runner = _InProcess() if client is None else _OnDask(client)
    _drive(run, runner, job, _to_send(_batches(samples, batch_size, done), run, job, resume), on_error, progress)
    _remove_partials(job.out_dir)  # a worker killed mid-write leaves its temporary behind
    _report(run, node_io, progress)
    return run


def _check_arguments(batch_size, node_io, on_error):
    if not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive int, not {batch_size!r}")
    if node_io not in (None, "outputs", "all"):
        raise ValueError(f"node_io must be None, 'outputs' or 'all', not {node_io!r}")
    if on_error not in ("stop", "skip"):
        raise ValueError(f"on_error must be 'stop' or 'skip', not {on_error!r}")


def _to_send(batches, run, job, resume):
    """The batches with a sample to write; the others count as already done."""
    for batch in batches:
        if not resume:
            for s in batch:
                _remove_outputs(job.out_dir, s.name)
        if all(s.done for s in batch):
            run.already_done += len(batch)
        else:
            yield batch


def _drive(run, runner, job, batches, on_error, progress):
    line = _ProgressLine(run, progress)
    start = time.monotonic()
    try:
        for results in runner.results(job, batches):
            for r in results:
                _count(run, r, on_error, line)
            run.seconds = time.monotonic() - start
            line.update()
    except BaseException as e:
        runner.cancel()
        line.clear()
        if isinstance(e, KeyboardInterrupt):
            print(f"interrupted: {run.run} sample(s) written; run again with resume=True to go on",
                  file=sys.stderr)
        raise
    finally:
        run.seconds = time.monotonic() - start
    line.clear()


def _count(run, result, on_error, line):
    if result.status == "run":
        run.run += 1
        run.bytes_written += result.bytes
    elif result.status == "done":
        run.already_done += 1
    elif result.fatal or on_error == "stop":
        raise _sample_error(run, result)
    else:
        line.clear()
        print(f"error: sample {result.label}: {result.message} (skipped)", file=sys.stderr)
        run.failed.append((result.label, result.message))


def _sample_error(run, result):
    from . import _core
    cls = getattr(_core, result.kind, _core.Error)
    where = f"{result.index + 1} of {run.total}" if run.total else f"sample {result.index + 1}"
    if result.fatal:
        return cls(f"model: {result.message}")
    return cls(f"sample {result.label} ({where}): {result.message}\n"
               "(on_error='skip' goes on past bad samples; resume=True skips those done)")


def _report(run, node_io, progress):
    if run.failed:
        print(f"{len(run.failed)} sample(s) failed:", file=sys.stderr)
        for label, _ in run.failed:
            print(f"  {label}", file=sys.stderr)
    if progress:
        print(run)
        print(f"outputs{' and node_io' if node_io else ''} in {run.out_dir}/ "
              f"(<sample>{_OUT}{', <sample>' + _NODE_IO if node_io else ''})")
