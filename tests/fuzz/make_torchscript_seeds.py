#!/usr/bin/python3
"""Writes the seed corpus of fuzz_torchscript: a few tiny traced modules (a few KB each).

Run with Debian's /usr/bin/python3 (torch 1.13); the output is committed under
tests/fuzz/corpus/torchscript/, so the fuzzer itself needs no Python:

    /usr/bin/python3 tests/fuzz/make_torchscript_seeds.py tests/fuzz/corpus/torchscript
"""
import json
import os
import sys

import zipfile

import torch
import torch.nn as nn


def restore(path):
    """Rewrites the archive with every member stored (torch.jit.save deflates the code
    files), so that fuzz_torchscript's zip-aware mutator can edit the TorchScript source
    too; LibTorch reads either form. Drops the *.debug_pkl source maps: they are optional,
    make up half the bytes, and LibTorch 1.13 crashes (SEGV in
    SourceRange::highlight) on a corrupt one when it reports a syntax error: a LibTorch bug
    that would otherwise stop the fuzzer over and over (tests/fuzz/README.md)."""
    with zipfile.ZipFile(path) as z:
        members = [(info.filename, z.read(info)) for info in z.infolist()
                   if not info.filename.endswith(".debug_pkl")]
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED) as z:
        for name, data in members:
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            z.writestr(info, data)


def save(module, path, example, hint=True):
    module = module.eval()
    traced = torch.jit.trace(module, example, check_trace=False)
    extra = {}
    if hint:  # the traced input shapes, as host/torchscript/importer.cpp reads them
        names = {torch.float32: "float32", torch.int64: "int64"}
        extra["switchyard_inputs.json"] = json.dumps(
            {"inputs": [{"dtype": names[t.dtype], "shape": list(t.shape)} for t in example]})
    torch.jit.save(traced, path, _extra_files=extra)
    restore(path)
    torch.jit.load(path)  # still loads


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 3)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(3, 2)

    def forward(self, x):
        return torch.softmax(self.fc2(self.act(self.fc1(x))), dim=-1)


class ConvBn(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(2, 2, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(2)
        self.relu = nn.ReLU(inplace=True)
        self.pool = nn.AdaptiveAvgPool2d(1)

    def forward(self, x):
        y = self.relu(self.bn(self.conv(x)))
        return torch.flatten(self.pool(y + x), 1)


class CatTuple(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(3, 3)

    def forward(self, a, b):
        c = torch.cat([self.proj(a), b], dim=1)
        v = c.view(c.size(0), -1, 2).transpose(1, 2)
        return v.sum(-1), (c * 2.0)[:, 1:]


class Embed(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(5, 2)
        self.ln = nn.LayerNorm(2)

    def forward(self, ids):
        return self.ln(self.emb(ids)).mean(1)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)  # the same bytes on every run
    with torch.no_grad():
        save(Mlp(), os.path.join(out, "mlp.pt"), (torch.randn(2, 4),))
        save(ConvBn(), os.path.join(out, "conv_bn.pt"), (torch.randn(1, 2, 4, 4),))
        save(CatTuple(), os.path.join(out, "cat_tuple.pt"), (torch.randn(2, 3), torch.randn(2, 1)))
        save(Embed(), os.path.join(out, "embed_nohint.pt"), (torch.tensor([[1, 4, 0]]),), hint=False)


if __name__ == "__main__":
    main()
