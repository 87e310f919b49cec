# switchyard.run_dataset on a real Dask LocalCluster (2 worker processes, 1 thread each):
# the same files as a single-process run, bit for bit; a worker killed mid-run; a run
# interrupted and resumed; a bad sample named and skipped; the CLI's files; no Dask needed
# without a client.
import os
import pathlib
import signal
import subprocess
import sys
import threading
import time

import pytest
import torch

import switchyard

distributed = pytest.importorskip("distributed")
import cloudpickle  # noqa: E402  (a dependency of distributed)

# The worker plugin below is defined here; workers cannot import this file, so it travels by value.
cloudpickle.register_pickle_by_value(sys.modules[__name__])

SAMPLES = 24


class Net(torch.nn.Module):
    """A ResNet block that widens to 128 channels, then a linear layer. conv2 runs by
    Winograd with the residual add fused, whose first run on a plan differs from later
    runs in the last bits: run_dataset warms each plan, so that a sample's bits do not
    depend on whether it came first to its worker."""

    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(8, 128, 3, 2, 1, bias=False)
        self.bn1 = torch.nn.BatchNorm2d(128)
        self.conv2 = torch.nn.Conv2d(128, 128, 3, 1, 1, bias=False)
        self.bn2 = torch.nn.BatchNorm2d(128)
        self.down = torch.nn.Conv2d(8, 128, 1, 2, bias=False)
        self.down_bn = torch.nn.BatchNorm2d(128)
        self.fc = torch.nn.Linear(128, 5)

    def forward(self, x):
        shortcut = self.down_bn(self.down(x))
        y = torch.relu(self.bn1(self.conv1(x)))
        y = torch.relu(self.bn2(self.conv2(y)) + shortcut)
        return self.fc(y.mean((2, 3)))


SHAPE = (1, 8, 32, 32)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A traced model, a one-thread config and SAMPLES input files (one image each)."""
    root = tmp_path_factory.mktemp("dataset")
    torch.manual_seed(0)
    with torch.no_grad():
        torch.jit.trace(Net().eval(), torch.randn(SHAPE)).save(str(root / "net.pt"))
    (root / "one.toml").write_text("[runtime]\nintra_op_threads = 1\nlog_level = \"warn\"\n")
    (root / "in").mkdir()
    for i in range(SAMPLES):
        torch.save((torch.randn(SHAPE),), str(root / "in" / f"s{i:02d}.pt"))
    return root


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as c:
        yield c


def run(files, out, **kwargs):
    kwargs = {"config": files / "one.toml", "progress": False, **kwargs}
    return switchyard.run_dataset(files / "net.pt", kwargs.pop("inputs", files / "in"), out, **kwargs)


def same_tensors(a, b):
    if isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor) and a.dtype == b.dtype and torch.equal(a, b)
    if isinstance(a, dict):
        return isinstance(b, dict) and list(a) == list(b) and all(same_tensors(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same_tensors(x, y) for x, y in zip(a, b))
    return a == b


def assert_same_files(out, reference):
    names = sorted(f for f in os.listdir(reference) if not f.startswith("."))
    assert sorted(os.listdir(out)) == names  # nothing missing, nothing extra, no temporaries
    for f in names:
        assert same_tensors(torch.load(out / f), torch.load(reference / f)), f


@pytest.fixture(scope="module")
def reference(files, tmp_path_factory):
    """The single-process run (client=None) at batch size 4, node_io outputs of conv only."""
    out = tmp_path_factory.mktemp("reference")
    summary = run(files, out, batch_size=4, node_io="outputs", nodes=["conv*"])
    assert (summary.run, summary.already_done, summary.failed) == (SAMPLES, 0, [])
    return out


class Journal(distributed.WorkerPlugin):
    """On every worker (those that start later too): each output file's rename is appended
    to `path`, after `delay` seconds, so a test can count writes and catch a run midway."""
    name = "switchyard-test-journal"

    def __init__(self, path, delay):
        self.path, self.delay = str(path), delay

    def setup(self, worker):
        import switchyard.dataset as d
        original = d.__dict__.setdefault("_untouched_publish", d._publish)
        path, delay = self.path, self.delay

        def publish(tmp, final):
            time.sleep(delay)
            original(tmp, final)
            if not final.endswith(".node_io.pt"):
                with open(path, "a") as f:
                    f.write(os.path.basename(final) + "\n")
        d._publish = publish


def journal(client, tmp_path, delay):
    path = tmp_path / "journal.txt"
    path.touch()
    client.register_worker_plugin(Journal(path, delay))
    return path


def written(path):
    lines = path.read_text().split()
    return {name: lines.count(name) for name in lines}


def when_outputs(out, count, action):
    """Calls `action` in a thread once `out` holds `count` output files."""
    def wait():
        while len([f for f in os.listdir(out) if f.endswith(".pt") and not f.startswith(".")]) < count:
            time.sleep(0.005)
        action()
    out.mkdir(exist_ok=True)
    thread = threading.Thread(target=wait, daemon=True)
    thread.start()
    return thread


def wait_for_two_workers(client):
    deadline = time.monotonic() + 30
    while len(client.run(os.getpid)) < 2 and time.monotonic() < deadline:
        time.sleep(0.1)


def test_cluster_writes_what_one_process_writes(files, reference, client, tmp_path):
    summary = run(files, tmp_path / "out", client=client, batch_size=4, node_io="outputs", nodes=["conv*"])
    assert (summary.run, summary.already_done, summary.failed) == (SAMPLES, 0, [])
    assert summary.bytes_per_sample == summary.bytes_written / SAMPLES > 0
    assert_same_files(tmp_path / "out", reference)
    io = torch.load(tmp_path / "out" / "s03.node_io.pt")
    assert list(io) == ["conv1", "conv2"]  # the filter: down, mean and fc are left out
    assert set(io["conv2"]) == {"op", "backend", "module_path", "input_sources", "inputs", "outputs"}
    assert io["conv2"]["inputs"] == [] and io["conv2"]["outputs"][0].shape == (1, 128, 16, 16)
    assert sorted(client.run(lambda: len(switchyard.dataset._MODELS)).values()) == [1, 1]  # loaded once per worker


def test_a_worker_killed_mid_run(files, reference, client, tmp_path):
    log = journal(client, tmp_path, delay=0.05)
    pids = list(client.run(os.getpid).values())
    assert len(pids) == 2
    at_kill = []

    def kill():
        at_kill.append(len(os.listdir(tmp_path / "out")))
        os.kill(pids[0], signal.SIGKILL)
    killer = when_outputs(tmp_path / "out", 4, kill)
    summary = run(files, tmp_path / "out", client=client, batch_size=4, node_io="outputs", nodes=["conv*"])
    killer.join(timeout=1)
    assert at_kill and at_kill[0] < 2 * SAMPLES  # it died midway
    assert pids[0] not in client.run(os.getpid).values()
    assert summary.failed == [] and summary.run + summary.already_done == SAMPLES
    assert_same_files(tmp_path / "out", reference)  # none lost, no temporaries left
    assert written(log) == {f"s{i:02d}.pt": 1 for i in range(SAMPLES)}  # none written twice
    wait_for_two_workers(client)


def test_interrupted_run_resumes_with_what_is_missing(files, reference, client, tmp_path):
    log = journal(client, tmp_path, delay=0.05)
    main = threading.main_thread().ident
    interrupter = when_outputs(tmp_path / "out", 6, lambda: signal.pthread_kill(main, signal.SIGINT))
    with pytest.raises(KeyboardInterrupt):
        run(files, tmp_path / "out", client=client, batch_size=4, node_io="outputs", nodes=["conv*"])
    interrupter.join(timeout=1)
    while any(client.run(lambda dask_worker: len(dask_worker.state.executing)).values()):
        time.sleep(0.05)  # cancelled tasks already running finish (and write) first
    before = written(log)
    assert 6 <= len(before) < SAMPLES
    summary = run(files, tmp_path / "out", client=client, batch_size=4, node_io="outputs", nodes=["conv*"])
    assert (summary.run, summary.already_done) == (SAMPLES - len(before), len(before))
    assert written(log) == {f"s{i:02d}.pt": 1 for i in range(SAMPLES)}  # the resumed run wrote only the rest
    assert_same_files(tmp_path / "out", reference)


def test_bad_sample_is_named_and_skipped(files, client, tmp_path, capsys):
    bad = tmp_path / "in"
    bad.mkdir()
    for f in sorted(os.listdir(files / "in"))[:8]:
        os.link(files / "in" / f, bad / f)
    os.remove(bad / "s05.pt")
    torch.save((torch.randn(1, 4, 32, 32),), str(bad / "s05.pt"))
    summary = run(files, tmp_path / "out", inputs=bad, client=client, batch_size=4, on_error="skip")
    assert summary.run == 7 and [label for label, _ in summary.failed] == [str(bad / "s05.pt")]
    assert "input 'x' expects [B, 8, H, W]" in summary.failed[0][1] and "got [1, 4, 32, 32]" in summary.failed[0][1]
    assert f"error: sample {bad / 's05.pt'}: input 'x' expects" in capsys.readouterr().err
    local = run(files, tmp_path / "local", inputs=bad, batch_size=4, on_error="skip")
    assert local.run == 7
    assert_same_files(tmp_path / "out", tmp_path / "local")
    with pytest.raises(switchyard.InputError, match=r"sample .*s05.pt \(6 of 8\): input 'x' expects \[B, 8, H, W\]"):
        run(files, tmp_path / "stop", inputs=bad, client=client, batch_size=4, resume=False)


def test_tensors_from_python(files, client, tmp_path):
    torch.manual_seed(1)
    images = [torch.randn(SHAPE) for _ in range(10)]
    summary = run(files, tmp_path / "out", inputs=iter(images), client=client, batch_size=3)
    assert summary.run == 10 and summary.total is None
    local = run(files, tmp_path / "local", inputs=images, batch_size=3)
    assert local.total == 10
    assert sorted(os.listdir(tmp_path / "out"))[:2] == ["sample_000000.pt", "sample_000001.pt"]
    assert_same_files(tmp_path / "out", tmp_path / "local")


def test_same_files_as_the_cli(files, tmp_path):
    """At batch size 1, the CLI's files. Winograd is off here: the CLI's first sample runs
    on a cold plan, which for conv2 differs from later runs in the last bits."""
    cli = pathlib.Path(switchyard.__file__).parents[2] / "bin" / "switchyard"
    if not cli.exists():
        pytest.skip(f"no CLI at {cli}")
    config = tmp_path / "no-winograd.toml"
    config.write_text((files / "one.toml").read_text() + '[[rules]]\nfamily = "conv"\nbackends = ["conv", "aten"]\n'
                      'options = { winograd = "off" }\n')
    subprocess.run([str(cli), "run", str(files / "net.pt"), "--config", str(config),
                    "--inputs-dir", str(files / "in"), "--save-outputs", str(tmp_path / "cli"),
                    "--node-io", "outputs"], check=True, capture_output=True)
    run(files, tmp_path / "py", node_io="outputs", config=config)
    assert_same_files(tmp_path / "py", tmp_path / "cli")


def test_resume_false_runs_everything_again(files, tmp_path):
    run(files, tmp_path / "out", inputs=sorted((files / "in").glob("*.pt"))[:3])
    again = run(files, tmp_path / "out", inputs=sorted((files / "in").glob("*.pt"))[:3])
    assert (again.run, again.already_done) == (0, 3)
    fresh = run(files, tmp_path / "out", inputs=sorted((files / "in").glob("*.pt"))[:3], resume=False)
    assert (fresh.run, fresh.already_done) == (3, 0)


def test_no_dask_needed_without_a_client(files, tmp_path):
    script = f"""
import sys
class NoDask:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("dask", "distributed"):
            raise ImportError("no " + name)
sys.meta_path.insert(0, NoDask())
import switchyard
s = switchyard.run_dataset({str(files / 'net.pt')!r}, {str(files / 'in')!r}, {str(tmp_path / 'out')!r}, progress=False)
assert s.run == {SAMPLES} and "distributed" not in sys.modules, s
"""
    subprocess.run([sys.executable, "-c", script], check=True, timeout=120)
