#!/usr/bin/python3
"""Writes the TorchScript fixtures for test_torchscript into the directory given.

Run with Debian's /usr/bin/python3 (it has torch). Each model is traced (or scripted) in
eval mode. The older fixtures are saved with the optional "switchyard_inputs.json" hint
(see host/torchscript/importer.cpp), the *_nohint ones and every plain_* one as users save
them: torch.jit.trace(m, x).save(path), nothing else. The plain_* models compute sizes
from their inputs (view/reshape/expand/arange/zeros/pad, lists of sizes, float size
arithmetic) and write in place through views; the test runs them at shapes other than
the traced ones.
"""
import math
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


class HfMasks(nn.Module):
    """Hugging Face's idioms on int64 masks: DistilBERT's masked_fill(mask == 0, min), BERT's
    (1.0 - mask[:, None, :]) * -10000.0 and mean pooling's h * mask (nothing pins them)."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(20, 8)
        self.proj = nn.Linear(8, 8)

    def forward(self, input_ids, attention_mask, mask):
        h = self.proj(self.emb(input_ids))  # [B, T, 8]
        scores = torch.matmul(h, h.transpose(1, 2))
        pad = (attention_mask == 0)[:, None, :].expand_as(scores)
        scores = scores.masked_fill(pad, torch.finfo(scores.dtype).min)
        scores = scores + (1.0 - mask[:, None, :]) * -10000.0
        h = torch.matmul(scores.softmax(-1), h)
        return (h * mask.unsqueeze(-1)).sum(1) / mask.sum(1, keepdim=True).clamp(min=1)


class PixelTo(nn.Module):
    """CLIP's patch embedding: pixel_values.to(dtype=weight.dtype), then the conv."""

    def __init__(self):
        super().__init__()
        self.patch = nn.Conv2d(3, 4, 2, stride=2, bias=False)

    def forward(self, pixel_values):
        return self.patch(pixel_values.to(dtype=self.patch.weight.dtype)).flatten(2)


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


class SizeOps(nn.Module):
    """Size arithmetic through view, reshape, expand, arange, zeros and pad."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 1)
        self.cls = nn.Parameter(torch.randn(1, 1, 8))

    def forward(self, x):  # [B, 3, H, W]
        y = self.conv(x)
        b, c, h, w = y.shape
        # channel shuffle (shufflenet)
        y = y.view(b, 2, c // 2, h, w).transpose(1, 2).contiguous().view(b, -1, h, w)
        # pad to a multiple of 4 (swin)
        y = F.pad(y, (0, (4 - w % 4) % 4, 0, (4 - h % 4) % 4))
        t = y.flatten(2).transpose(1, 2)  # [B, H'W', C]
        t = torch.cat([self.cls.expand(b, -1, -1), t], dim=1)  # ViT's class token
        pos = torch.arange(t.size(1)).to(torch.float32).unsqueeze(-1) * 0.01
        t = t + pos + torch.zeros(b, t.size(1), 1)
        return t * (t.size(-1) ** -0.5), t.reshape(b, -1).sum(-1)


class HalfBatch(nn.Module):
    def forward(self, x):
        n = x.size(0) // 2
        return x[:n] * 2.0 + x[n:2 * n]


class FloatSizes(nn.Module):
    """Float arithmetic on sizes: x.size(-1) ** 0.5, int(0.5 * size), a size as a tensor."""

    def forward(self, x):  # [B, S, D]
        scale = x.size(-1) ** 0.5
        keep = int(x.size(1) * 0.5)
        y = x[:, :keep] / scale
        return y * (x.size(1) / 4), y + x.size(0)


class SizeLists(nn.Module):
    """Lists of sizes: BERT's x.size()[:-1] + (heads, -1), zeros(x.size()), x.shape[1:]."""

    def forward(self, x):  # [B, S, 8]
        heads = x.view(x.size()[:-1] + (2, -1)).permute(0, 2, 1, 3)
        z = torch.zeros(x.size()) + 1.0
        flat = x.reshape([x.size(0)] + [x.shape[1] * x.shape[2]])
        return heads * 2.0, z * x, flat


class WriteSlice(nn.Module):
    """A mask made from sizes and written through a slice."""

    def forward(self, x):  # [B, S]
        m = torch.zeros(x.shape[0], x.shape[1])
        m[:, : x.shape[1] // 2] = 1.0
        return x * m


class WriteSelect(nn.Module):
    """Writes through select, then through a view chain ending in a select."""

    def forward(self, x):  # [B, 4, 6]
        y = x * 1.0
        y[:, 1] = 0.0
        y[:, 2] += 5.0
        v = y.view(y.size(0), -1)
        v[:, 0] = -3.0
        return y + 1.0, v.sum(-1)


class ShiftedWindowMask(nn.Module):
    """Swin's shifted-window attention mask: written through four slices, from sizes."""

    def forward(self, x):  # [B, H, W, C], H and W even
        _, h, w, _ = x.shape
        img_mask = torch.zeros((1, h, w, 1))
        cnt = 0
        for hs in (slice(0, -2), slice(-2, -1), slice(-1, None)):
            for ws in (slice(0, -2), slice(-2, -1), slice(-1, None)):
                img_mask[:, hs, ws, :] = cnt
                cnt += 1
        windows = img_mask.view(1, h // 2, 2, w // 2, 2, 1).permute(0, 1, 3, 2, 4, 5).reshape(-1, 4)
        attn = windows.unsqueeze(1) - windows.unsqueeze(2)
        attn = attn.masked_fill(attn != 0, -100.0)
        return x + img_mask, attn


class StridedWrite(nn.Module):
    """A write through as_strided while the base is read later: not functional."""

    def forward(self, x):  # [3, 4]
        v = x.as_strided((2, 2), (4, 1), 1)
        v.mul_(2.0)
        return x + 1.0


class LstmNoState(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(6, 8, num_layers=2, batch_first=True, bidirectional=True)
        self.gru = nn.GRU(16, 5)

    def forward(self, x):  # [B, T, 6]; no initial state: zeros of [4, B, 8] from the batch size
        out, _ = self.lstm(x)
        seq, h = self.gru(out.transpose(0, 1))
        return seq, h


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
    masks = torch.ones(2, 5, dtype=torch.long)
    masks[1, 3:] = 0
    save(HfMasks(), f"{out}/plain_hf_masks.pt", (ids, masks, masks), hint=False)
    save(PixelTo(), f"{out}/plain_pixel_to.pt", (torch.randn(1, 3, 8, 8),), hint=False)
    enc = Encoder().eval()
    x = torch.randn(2, 5, 16)
    mask = torch.tensor([[False] * 5, [False] * 3 + [True] * 2])
    with torch.no_grad():  # the fast path: nested tensors
        save(enc, f"{out}/encoder_nograd.pt", (x, mask))
    save(enc, f"{out}/encoder_grad.pt", (x, mask))  # decomposed attention
    save(enc, f"{out}/encoder_grad_nohint.pt", (x, mask), hint=False)
    save(Control(), f"{out}/control.pt", None, script=True)
    # Plain traces (no hint): sizes computed at run time, writes through views.
    save(SizeOps(), f"{out}/plain_size_ops.pt", (torch.randn(2, 3, 6, 5),), hint=False)
    save(HalfBatch(), f"{out}/plain_half.pt", (torch.randn(4, 3),), hint=False)
    save(FloatSizes(), f"{out}/plain_float_sizes.pt", (torch.randn(2, 6, 16),), hint=False)
    save(SizeLists(), f"{out}/plain_size_lists.pt", (torch.randn(2, 5, 8),), hint=False)
    save(WriteSlice(), f"{out}/plain_write_slice.pt", (torch.randn(2, 6),), hint=False)
    save(WriteSelect(), f"{out}/plain_write_select.pt", (torch.randn(2, 4, 6),), hint=False)
    save(ShiftedWindowMask(), f"{out}/plain_window_mask.pt", (torch.randn(1, 6, 8, 3),), hint=False)
    save(StridedWrite(), f"{out}/plain_strided_write.pt", (torch.randn(3, 4),), hint=False)
    save(LstmNoState(), f"{out}/plain_lstm.pt", (torch.randn(2, 5, 6),), hint=False)
    with open(f"{out}/mlp.pt", "rb") as f:
        data = f.read()
    with open(f"{out}/truncated.pt", "wb") as f:
        f.write(data[: len(data) // 2])
    with open(f"{out}/random.pt", "wb") as f:
        f.write(os.urandom(4096))
    torch.save((torch.randn(2, 3),), f"{out}/tensors.pt")  # a zip archive, but no module


if __name__ == "__main__":
    main(sys.argv[1])
