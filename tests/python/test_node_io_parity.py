# node_io against PyTorch's own intermediate values: every node_io record of a leaf
# nn.Module equals what a forward hook on that module captures, and every module's output
# equals the last record under its module path; within the project's fidelity bound.
import collections
import math

import pytest
import torch

from conftest import fidelity_bound

torchvision = pytest.importorskip("torchvision")


class SelfAttention(torch.nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.scale = 1.0 / math.sqrt(dim // heads)
        self.q, self.k, self.v, self.o = (torch.nn.Linear(dim, dim) for _ in range(4))

    def forward(self, x):
        b, s, d = x.shape
        split = lambda t: t.view(b, s, self.heads, d // self.heads).transpose(1, 2)  # noqa: E731
        q, k, v = split(self.q(x)), split(self.k(x)), split(self.v(x))
        weights = torch.softmax(q @ k.transpose(-1, -2) * self.scale, dim=-1)
        return self.o((weights @ v).transpose(1, 2).reshape(b, s, d))


class EncoderLayer(torch.nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.attn = SelfAttention(dim, heads)
        self.ln1 = torch.nn.LayerNorm(dim)
        self.ff1 = torch.nn.Linear(dim, 4 * dim)
        self.act = torch.nn.GELU()
        self.ff2 = torch.nn.Linear(4 * dim, dim)
        self.ln2 = torch.nn.LayerNorm(dim)

    def forward(self, x):
        x = self.ln1(x + self.attn(x))
        return self.ln2(x + self.ff2(self.act(self.ff1(x))))


class TinyBert(torch.nn.Module):
    """A BERT-like encoder: token and position embeddings, post-norm layers, a pooler."""

    def __init__(self, vocab=100, dim=32, heads=4, layers=2, max_len=64):
        super().__init__()
        self.tokens = torch.nn.Embedding(vocab, dim)
        self.positions = torch.nn.Embedding(max_len, dim)
        self.ln = torch.nn.LayerNorm(dim)
        self.layers = torch.nn.ModuleList(EncoderLayer(dim, heads) for _ in range(layers))
        self.pooler = torch.nn.Linear(dim, dim)

    def forward(self, ids):
        positions = torch.arange(ids.shape[1]).unsqueeze(0)
        x = self.ln(self.tokens(ids) + self.positions(positions))
        for layer in self.layers:
            x = layer(x)
        return torch.tanh(self.pooler(x[:, 0]))


def hook_captures(net, example):
    """Each module's outputs, per call, in call order (cloned: resnet's ReLUs work in place)."""
    captures = collections.defaultdict(list)
    order = []
    handles = []
    for name, module in net.named_modules():
        if name:
            def hook(_module, _inputs, output, name=name):
                captures[name].append(output.detach().clone())
                order.append((name, len(captures[name]) - 1))
            handles.append(module.register_forward_hook(hook))
    with torch.no_grad():
        net(example)
    for h in handles:
        h.remove()
    return captures, order


def assert_close(actual, expected, what):
    assert actual.shape == expected.shape, f"{what}: shape {tuple(actual.shape)} vs {tuple(expected.shape)}"
    diff = (actual.double() - expected.double()).abs().max().item()
    assert diff <= fidelity_bound(expected.double()), f"{what}: max |diff| {diff:.3g}"


def check_parity(rt, net, trace_input, run_input, min_leaf_records):
    net.eval()
    m = rt.load(net, trace_input)
    (output,), node_io = m.run(run_input, node_io="all")
    captures, order = hook_captures(net, run_input)
    leaves = {name for name, mod in net.named_modules() if name and not list(mod.children())}

    # Each record of a leaf module: the k-th record with that path is the module's k-th call.
    # A convolution with a BatchNorm folded into it (its weight "*_fused_bn", TorchScript's
    # freeze) computes the BatchNorm's output: the call right after it in call order.
    seen = collections.Counter()
    checked = 0
    for node, record in node_io.items():
        path = record["module"]
        if path not in leaves:
            continue
        call = seen[path]
        seen[path] += 1
        expected = captures[path][call]
        if any(s.endswith("_fused_bn") for s in record["input_sources"]):
            bn_name, bn_call = order[order.index((path, call)) + 1]
            assert isinstance(net.get_submodule(bn_name), torch.nn.BatchNorm2d), bn_name
            expected = captures[bn_name][bn_call]
        assert_close(record["outputs"][0], expected, f"node {node} (module {path})")
        checked += 1
    assert checked >= min_leaf_records, f"only {checked} leaf-module records"
    assert seen == collections.Counter({p: len(captures[p]) for p in seen}), "records per module != calls"

    # Every hooked module whose path appears in node_io: its (last) output is the output
    # of the last record at or under its path.
    last_under = {}
    for record in node_io.values():
        parts = record["module"].split(".") if record["module"] else []
        for i in range(1, len(parts) + 1):
            last_under[".".join(parts[:i])] = record
    for name, calls in captures.items():
        if name in last_under and not isinstance(net.get_submodule(name), torch.nn.BatchNorm2d):
            assert_close(last_under[name]["outputs"][0], calls[-1], f"module {name}")
    with torch.no_grad():
        assert_close(output, net(run_input), "model output")
    return checked


def test_resnet18_node_io_matches_forward_hooks(rt):
    torch.manual_seed(0)
    net = torchvision.models.resnet18(weights=None)
    checked = check_parity(rt, net, torch.randn(1, 3, 64, 64), torch.randn(2, 3, 80, 96), min_leaf_records=40)
    assert checked >= 40


def test_bert_like_encoder_node_io_matches_forward_hooks(rt):
    torch.manual_seed(0)
    net = TinyBert()
    check_parity(rt, net, torch.randint(0, 100, (1, 8)), torch.randint(0, 100, (2, 13)), min_leaf_records=20)
