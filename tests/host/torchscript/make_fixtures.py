#!/usr/bin/python3
"""Writes the TorchScript fixtures for test_torchscript into the directory given.

Run with Debian's /usr/bin/python3 (it has torch). Each model is traced (or scripted) in
eval mode and saved with its traced input shapes in the archive's
"switchyard_inputs.json" extra file (see host/torchscript/importer.cpp), except the
*_nohint fixtures, which are saved without it.
"""
import json
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F


def save(module, path, example, hint=True, script=False, shapes_only=False):
    module = module.eval()
    if script:
        m = torch.jit.script(module)
    else:
        m = torch.jit.trace(module, example, check_trace=False)
    extra = {}
    if shapes_only:  # the short form: a bare list, shapes only (dtypes read from use)
        extra["switchyard_inputs.json"] = json.dumps([{"shape": list(t.shape)} for t in example])
    elif hint and example is not None:
        dtypes = {torch.float32: "float32", torch.int64: "int64", torch.bool: "bool"}
        extra["switchyard_inputs.json"] = json.dumps(
            {"inputs": [{"dtype": dtypes[t.dtype], "shape": list(t.shape)} for t in example]})
    torch.jit.save(m, path, _extra_files=extra)


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(16, 16)
        self.out = nn.Linear(16, 4)

    def forward(self, x):
        h = self.act(self.fc1(x))
        return self.out(torch.relu(self.fc2(h)) + h)


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv1 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(c)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(c)

    def forward(self, x):
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out += x
        return self.relu(out)


class Cnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.relu = nn.ReLU(inplace=True)
        self.layer1 = nn.Sequential(Block(8), Block(8))
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(8, 5)
        for bn in [m for m in self.modules() if isinstance(m, nn.BatchNorm2d)]:
            bn.running_mean.uniform_(-0.5, 0.5)
            bn.running_var.uniform_(0.5, 2.0)
            bn.weight.data.uniform_(0.5, 1.5)
            bn.bias.data.uniform_(-0.2, 0.2)

    def forward(self, x):
        x = self.relu(self.bn1(self.conv1(x)))
        x = self.pool(self.layer1(x))
        return self.fc(x.view(x.size(0), -1))  # size arithmetic: lowered to flatten(x, 1)


class InPlace(nn.Module):
    def forward(self, x, y):
        x.mul_(2.0)              # writes into a graph input
        z = y * 3.0
        z.add_(x).relu_()        # writes into fresh tensors (RemoveMutation's case)
        return x + z


class ViewWrite(nn.Module):
    def forward(self, x):
        v = x[0]
        v.add_(1.0)              # writes through a view of x, then x is used
        return x * 2.0


class Cat(nn.Module):
    def forward(self, a, b):
        c = torch.cat([a, torch.relu(a), b], dim=1)
        s = torch.stack([a, b], dim=0)
        return c.sum(dim=1, keepdim=True) + s.mean(dim=0)


class Tuple(nn.Module):
    def forward(self, x):
        q, k = torch.chunk(x, 2, dim=1)
        return q + 1.0, (k * 2.0, torch.softmax(x, dim=-1))


class Embed(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(20, 6)
        self.proj = nn.Linear(6, 3)

    def forward(self, ids):
        return self.proj(self.emb(ids)).mean(dim=1)


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        layer = nn.TransformerEncoderLayer(16, 2, 32, dropout=0.1, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, 2)
        for i, l in enumerate(self.encoder.layers):  # distinct weights per layer
            for p in l.parameters():
                p.data.add_(0.05 * (i + 1) * torch.randn_like(p))
        self.head = nn.Linear(16, 4)

    def forward(self, x, pad_mask):
        return self.head(self.encoder(x, src_key_padding_mask=pad_mask))


class ClassToken(nn.Module):
    """ViT's pattern: a learned token expanded to the batch (a size-dependent constant)."""

    def __init__(self):
        super().__init__()
        self.cls = nn.Parameter(torch.randn(1, 1, 6))
        self.proj = nn.Linear(6, 6)

    def forward(self, x):
        n = x.shape[0]
        tok = self.cls.expand(n, -1, -1)
        h = torch.cat([tok, self.proj(x)], dim=1)
        return h.reshape(n, 2, 2, -1).sum(dim=(1, 2)) + h[:, 0]


class Control(nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            return x * 2.0
        return x - 1.0


def main(out):
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    save(Mlp(), f"{out}/mlp.pt", (torch.randn(4, 8),))
    cnn = Cnn()
    save(cnn, f"{out}/cnn.pt", (torch.randn(2, 3, 16, 16),))
    save(cnn, f"{out}/cnn_nohint.pt", (torch.randn(2, 3, 16, 16),), hint=False)
    save(InPlace(), f"{out}/inplace.pt", (torch.randn(3, 4), torch.randn(3, 4)))
    save(ViewWrite(), f"{out}/view_write.pt", (torch.randn(3, 4),))
    save(Cat(), f"{out}/cat.pt", (torch.randn(2, 3), torch.randn(2, 3)))
    save(Tuple(), f"{out}/tuple.pt", (torch.randn(2, 6),))
    ids = torch.randint(0, 20, (2, 5))
    save(Embed(), f"{out}/embed.pt", (ids,))
    save(Embed(), f"{out}/embed_nohint.pt", (ids,), hint=False)
    save(Embed(), f"{out}/embed_shapes.pt", (ids,), shapes_only=True)
    save(ClassToken(), f"{out}/class_token.pt", (torch.randn(2, 3, 6),))
    enc = Encoder().eval()
    x = torch.randn(2, 5, 16)
    mask = torch.tensor([[False] * 5, [False] * 3 + [True] * 2])
    with torch.no_grad():  # the fast path: nested tensors
        save(enc, f"{out}/encoder_nograd.pt", (x, mask))
    save(enc, f"{out}/encoder_grad.pt", (x, mask))  # decomposed attention
    save(enc, f"{out}/encoder_grad_nohint.pt", (x, mask), hint=False)
    save(Control(), f"{out}/control.pt", None, script=True)
    with open(f"{out}/mlp.pt", "rb") as f:
        data = f.read()
    with open(f"{out}/truncated.pt", "wb") as f:
        f.write(data[: len(data) // 2])
    with open(f"{out}/random.pt", "wb") as f:
        f.write(os.urandom(4096))
    torch.save((torch.randn(2, 3),), f"{out}/tensors.pt")  # a zip archive, but no module


if __name__ == "__main__":
    main(sys.argv[1])
