# The Python API as users call it: zero-copy tensors, node_io, plan, profile, errors, threads.
import copy
import threading

import pytest
import torch

import switchyard


class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(8, 16)
        self.act = torch.nn.ReLU()
        self.fc2 = torch.nn.Linear(16, 4)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


@pytest.fixture(scope="module")
def mlp():
    torch.manual_seed(0)
    return Mlp().eval()


def test_run_matches_torch_at_another_batch(rt, mlp):
    m = rt.load(mlp, torch.randn(2, 8))
    x = torch.randn(5, 8)
    outputs = m.run(x)
    assert isinstance(outputs, tuple) and len(outputs) == 1
    with torch.no_grad():
        expected = mlp(x)
    assert torch.allclose(outputs[0], expected, atol=1e-5, rtol=1e-5)


def test_inputs_and_outputs_are_shared_not_copied(rt):
    m = rt.load(torch.nn.ReLU(), torch.randn(2, 3))
    x = torch.randn(64, 32)
    (y,), node_io = m.run(x, node_io="all")
    record = node_io["relu"]
    assert record["inputs"][0].data_ptr() == x.data_ptr()  # the input switchyard ran on is x itself
    assert record["outputs"][0].data_ptr() == y.data_ptr()  # the output torch got is the kernel's
    assert torch.equal(y, x.relu())
    # A strided (transposed) input goes in as a view too.
    xt = torch.randn(32, 64).t()
    (_,), node_io = m.run(xt, node_io="all")
    assert node_io["relu"]["inputs"][0].data_ptr() == xt.data_ptr()
    assert node_io["relu"]["inputs"][0].stride() == xt.stride()


def test_outputs_outlive_model_and_runtime(mlp):
    rt = switchyard.Runtime(log_level="warn")
    m = rt.load(mlp, torch.randn(1, 8))
    (y,), node_io = m.run(torch.ones(3, 8), node_io="outputs")
    del m, rt
    with torch.no_grad():
        assert torch.allclose(y, mlp(torch.ones(3, 8)), atol=1e-5)
    assert list(node_io) and node_io[next(iter(node_io))]["outputs"][0].shape[0] == 3


def test_node_io_modes(rt, mlp):
    m = rt.load(mlp, torch.randn(2, 8))
    x = torch.randn(2, 8)
    (y,), io_all = m.run(x, node_io="all")
    (_,), io_out = m.run(x, node_io="outputs")
    assert list(io_all) == ["fc1", "act", "fc2"]
    assert [r["module"] for r in io_all.values()] == ["fc1", "act", "fc2"]
    assert io_all["fc2"]["input_sources"][0] == "act"
    assert len(io_all["fc1"]["inputs"]) == 3 and io_out["fc1"]["inputs"] == []
    assert all(r["backend"] for r in io_all.values())
    assert torch.equal(io_all["fc2"]["outputs"][0], y)
    with pytest.raises(ValueError, match="node_io='everything'"):
        m.run(x, node_io="everything")


def test_plan_and_profile(rt, mlp):
    m = rt.load(mlp, torch.randn(2, 8))
    with pytest.raises(ValueError, match="no declared shape"):
        m.plan()  # a trace declares no input shapes
    plan = m.plan(torch.randn(3, 8))
    assert {"node", "op", "module", "backend", "why", "rejections", "kernel_cost"} <= set(plan[0])
    assert all(entry["backend"] for entry in plan)
    profile = m.profile(torch.randn(4, 8), repeat=3)
    assert profile and all(p["mean_ms"] >= p["min_ms"] >= 0 for p in profile)
    assert {p["node"] for p in profile} <= {e["node"] for e in plan} | {"fc1", "act", "fc2"}


def test_plan_kernel_cost(source_dir, mlp):
    # configs/example.toml: relu on the example plugin, which reports its kernels' cost
    # (one FLOP per element, input and output bytes); the linears on aten, which does not.
    rt = switchyard.Runtime(config=source_dir / "configs/example.toml", log_level="warn")
    plan = {e["node"]: e for e in rt.load(mlp, torch.randn(2, 8)).plan(torch.randn(3, 8))}
    assert plan["act"]["backend"] == "example", plan["act"]
    assert plan["act"]["kernel_cost"] == {"flops": 3 * 16, "bytes": 8 * 3 * 16, "scratch_bytes": 0}
    assert plan["fc1"]["backend"] == "aten" and plan["fc1"]["kernel_cost"] is None, plan["fc1"]
    # Every node has a cost: the kernel's own, else the host's estimate at the planned
    # shapes. fc1 is [3, 8] x [16, 8]^T + [16]: 2 FLOPs per multiply-add; each tensor's bytes once.
    assert plan["act"]["cost"] == {"flops": 3 * 16, "bytes": 8 * 3 * 16}, plan["act"]
    assert plan["fc1"]["cost"] == {"flops": 2 * 3 * 16 * 8, "bytes": 4 * (3 * 8 + 16 * 8 + 16 + 3 * 16)}, plan["fc1"]


def test_plan_shows_a_float32_island(tmp_path, mlp):
    # A bfloat16 trace computing as-is, its linears routed to linalg (float32 only): each runs
    # as a float32 island, its output back in bfloat16; relu stays bfloat16 on aten.
    config = tmp_path / "as_is.toml"
    config.write_text('[selection]\ndefault = ["aten"]\n[[rules]]\nop = "aten::linear"\nbackends = ["linalg"]\n'
                      '[precision]\ncompute = "as-is"\n')
    rt = switchyard.Runtime(config=config, log_level="error")
    model = copy.deepcopy(mlp).to(torch.bfloat16)
    m = rt.load(model, torch.randn(2, 8, dtype=torch.bfloat16))
    x = torch.randn(3, 8).to(torch.bfloat16)
    (y,) = m.run(x)
    assert y.dtype == torch.bfloat16
    with torch.no_grad():  # each island rounds its output to bfloat16, as PyTorch does
        assert torch.allclose(y.float(), model(x).float(), atol=0.05, rtol=0.02)
    plan = {e["node"]: e for e in m.plan(x)}
    assert plan["fc1"]["backend"] == "linalg" and plan["fc1"]["compute"]["island"] == "bfloat16", plan["fc1"]
    assert plan["fc1"]["compute"]["computes"] == "float32" and plan["fc1"]["compute"]["bytes_once"] == 4 * (16 * 8 + 16)
    assert plan["act"]["compute"] is None, plan["act"]


def test_load_file(rt, source_dir, tmp_path, mlp):
    path = tmp_path / "mlp.pt"
    torch.jit.trace(mlp, torch.randn(1, 8)).save(str(path))
    (y,) = rt.load(path).run(torch.ones(2, 8))
    with torch.no_grad():
        assert torch.allclose(y, mlp(torch.ones(2, 8)), atol=1e-5)
    demo = rt.load(source_dir / "tools/demo/mlp.json")
    assert demo.inputs[0]["name"] == "x" and demo.inputs[0]["shape"] == [2, 8]
    assert [e["node"] for e in demo.plan()][0] == "fc1"  # from the declared shapes


def test_bad_config_names_file_and_line(tmp_path):
    config = tmp_path / "bad.toml"
    config.write_text("[selection]\nstrict = true\ndefault = [\n")
    with pytest.raises(switchyard.ConfigError, match=r"bad\.toml:3"):
        switchyard.Runtime(config=config)


def test_unknown_op_names_node_and_plugins(rt, source_dir, tmp_path):
    demo = (source_dir / "tools/demo/mlp.json").read_text()
    (tmp_path / "mystery.json").write_text(demo.replace('"aten::softmax"', '"aten::frobnicate"'))
    (tmp_path / "mlp.bin").write_bytes((source_dir / "tools/demo/mlp.bin").read_bytes())
    m = rt.load(tmp_path / "mystery.json")
    with pytest.raises(switchyard.Error, match=r"no backend can run node 'softmax' \(op aten::frobnicate") as info:
        m.run(torch.randn(2, 8))
    assert "aten: no kernel for aten::frobnicate" in str(info.value)


def test_wrong_input_shape_and_count_raise(rt, source_dir, mlp):
    demo = rt.load(source_dir / "tools/demo/mlp.json")
    with pytest.raises(switchyard.InputError, match=r"input 'x' expects \[2, 8\] \(dim 1 is fixed to 8 by fc1.weight\), got \[2, 3\]"):
        demo.run(torch.randn(2, 3))
    m = rt.load(mlp, torch.randn(2, 8))
    with pytest.raises(switchyard.Error):
        m.run(torch.randn(2, 5))
    with pytest.raises(switchyard.Error):
        m.run(torch.randn(2, 8), torch.randn(2, 8))
    with pytest.raises(switchyard.IoError):
        rt.load("/nonexistent/model.pt")
    with pytest.raises(TypeError, match="input 0: expected a torch.Tensor, got str"):
        m.run("not a tensor")
    # A tensor switchyard cannot take is refused at the boundary (host/python/tensor_import.cpp).
    with pytest.raises(switchyard.InputError, match=r"^input 0: dtype dtype\(code=5,bits=64,lanes=1\) is not one switchyard takes"):
        m.run(torch.zeros(2, 8, dtype=torch.complex64))
    (y,) = m.run(torch.randn(8, 2).t())  # a transposed view crosses as it is
    assert y.shape == (2, 4)
    (y,) = m.run(torch.randn(2, 8))  # the model still runs after the errors
    assert y.shape == (2, 4)
    assert issubclass(switchyard.InputError, switchyard.Error) and issubclass(switchyard.Error, RuntimeError)


def test_out_of_memory_is_its_own_error(rt, mlp, monkeypatch):
    # The memory pre-flight (docs/reliability.md) with an injected limit: a batch far
    # bigger than the planned one is refused before anything runs; a smaller one runs.
    assert issubclass(switchyard.OutOfMemoryError, switchyard.Error)
    m = rt.load(mlp, torch.randn(2, 8))
    m.run(torch.randn(2, 8))
    monkeypatch.setenv("SWITCHYARD_MEMORY_AVAILABLE", "100000")
    with pytest.raises(switchyard.OutOfMemoryError, match="memory pre-flight: .*the largest batch that fits is about"):
        m.run(torch.randn(100000, 8))
    (y,) = m.run(torch.randn(1, 8))
    assert y.shape == (1, 4)


def test_two_threads_get_one_threads_results(rt, mlp):
    m = rt.load(mlp, torch.randn(2, 8))
    inputs = [torch.randn(3 + i % 4, 8) for i in range(40)]
    expected = [m.run(x)[0] for x in inputs]
    results = {}

    def worker(name):
        results[name] = [m.run(x)[0] if i % 2 else m.run(x, node_io="outputs")[0][0] for i, x in enumerate(inputs)]

    threads = [threading.Thread(target=worker, args=(n,)) for n in ("a", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for name in ("a", "b"):
        assert all(torch.equal(r, e) for r, e in zip(results[name], expected)), name


def test_bool_tensors_cross_as_bool(rt):
    class Mask(torch.nn.Module):
        def forward(self, x, keep):
            return x.masked_fill(keep.logical_not(), 0.0), keep.logical_not()

    m = rt.load(Mask(), (torch.randn(2, 3), torch.ones(2, 3, dtype=torch.bool)))
    x, keep = torch.randn(4, 3), torch.rand(4, 3) > 0.5
    (y, dropped), node_io = m.run(x, keep, node_io="all")
    assert dropped.dtype == torch.bool and torch.equal(dropped, ~keep)
    assert torch.equal(y, x.masked_fill(~keep, 0.0))
    first = next(iter(node_io.values()))
    assert any(t.dtype == torch.bool and t.data_ptr() == keep.data_ptr() for t in first["inputs"])


def test_config_file_routes_nodes(source_dir, mlp):
    rt = switchyard.Runtime(config=source_dir / "configs/default.toml", log_level="warn")
    assert rt.config_source.endswith("default.toml")
    m = rt.load(mlp, torch.randn(2, 8))
    plan = m.plan(torch.randn(3, 8))
    assert "linalg" in {e["backend"] for e in plan}, plan  # default.toml sends linear to linalg
    (y,) = m.run(torch.randn(3, 8))
    assert y.shape == (3, 4)


def _fixture_tensors(path, names=None):
    """A .pt2 fixture's JSON tensors (tools/torch2/make_fixtures.py), in file or `names` order."""
    import json
    with open(path) as f:
        data = json.load(f)
    dtypes = {"float32": torch.float32, "int64": torch.int64, "bool": torch.bool}
    order = names if names is not None else list(data)
    return [torch.tensor(data[n]["data"], dtype=dtypes[data[n]["dtype"]]).reshape(data[n]["shape"]) for n in order]


def test_load_pt2_keys_node_io_by_fx_names(source_dir):
    from conftest import fidelity_bound
    rt = switchyard.Runtime(config=source_dir / "configs" / "default.toml", log_level="warn")
    fixtures = source_dir / "tests" / "host" / "pt2" / "fixtures" / "torch-2.6"
    m = rt.load(fixtures / "bert.pt2")
    inputs = _fixture_tensors(fixtures / "bert.b3_s7.inputs.json", ["input_ids", "token_type_ids", "attention_mask"])
    expected = _fixture_tensors(fixtures / "bert.b3_s7.expected.json")
    outputs, node_io = m.run(*inputs, node_io="outputs")
    for got, want in zip(outputs, expected):
        assert (got - want).abs().max().item() <= fidelity_bound(want)
    assert "embedding" in node_io and "linear" in node_io and "layer_norm" in node_io
    assert node_io["linear"]["module"] == "layer.0.attention.query"
