"""Small transformer models for switchyard's model zoo (see tools/zoo/export_zoo.py).

Both are built only from stock torch.nn modules, the way users write them, so that a
trace records what users send:

- BertLike: a post-LayerNorm encoder (nn.TransformerEncoder) over token ids with a padding
  mask derived from the ids inside forward (pad id 0). Eval mode under torch.no_grad()
  takes PyTorch's "sparsity fast path": aten::_nested_tensor_from_mask, then
  aten::_transformer_encoder_layer_fwd per layer, then aten::to_padded_tensor. With grad
  enabled the trace holds the decomposed ops (linear, softmax, layer_norm, ...).
  Output: classification logits from the first ([CLS]) position, [B, NUM_CLASSES].
  Only the [CLS] row is returned on purpose: on the fast path to_padded_tensor pads to the
  longest row of the batch, so per-token outputs would change shape with the padding.

- GptLike: a pre-LayerNorm causal decoder (LN -> causal self-attention -> residual;
  LN -> MLP with GELU -> residual), final LN, LM head tied to the token embedding.
  Output: logits [B, T, VOCAB]. nn.MultiheadAttention in PyTorch 1.13 refuses its fast
  path whenever attn_mask is given ("attn_mask was not None"), so even a no_grad trace of
  this model holds decomposed attention; see export_zoo.py.

Requires Debian's /usr/bin/python3 (python3-torch).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

PAD_ID = 0


class BertLike(nn.Module):
    VOCAB = 1000
    D_MODEL = 128
    N_HEAD = 4  # even: PyTorch 1.13's fast path refuses an odd head count
    D_FF = 256
    N_LAYERS = 2
    MAX_LEN = 64
    NUM_CLASSES = 8

    def __init__(self):
        super().__init__()
        d = self.D_MODEL
        self.tok_emb = nn.Embedding(self.VOCAB, d, padding_idx=PAD_ID)
        self.pos_emb = nn.Embedding(self.MAX_LEN, d)
        self.emb_norm = nn.LayerNorm(d)
        layer = nn.TransformerEncoderLayer(d, self.N_HEAD, dim_feedforward=self.D_FF,
                                           activation="gelu", batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=self.N_LAYERS)
        self.pooler = nn.Linear(d, d)
        self.classifier = nn.Linear(d, self.NUM_CLASSES)
        self.register_buffer("pos_ids", torch.arange(self.MAX_LEN), persistent=False)

    def forward(self, ids):
        pad_mask = ids.eq(PAD_ID)  # [B, T] bool, True = padding
        x = self.tok_emb(ids) + self.pos_emb(self.pos_ids[: ids.size(1)])
        x = self.emb_norm(x)
        x = self.encoder(x, src_key_padding_mask=pad_mask)
        pooled = torch.tanh(self.pooler(x[:, 0]))
        return self.classifier(pooled)


class GptBlock(nn.Module):
    def __init__(self, d, n_head):
        super().__init__()
        self.ln_1 = nn.LayerNorm(d)
        # dropout 0: PyTorch's fast path also requires it; the mask is what rules it out
        self.attn = nn.MultiheadAttention(d, n_head, dropout=0.0, batch_first=True)
        self.ln_2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x, causal_mask):
        h = self.ln_1(x)
        a, _ = self.attn(h, h, h, attn_mask=causal_mask, need_weights=False)
        x = x + a
        return x + self.mlp(self.ln_2(x))


class GptLike(nn.Module):
    VOCAB = 1000
    D_MODEL = 128
    N_HEAD = 4
    N_LAYERS = 2
    MAX_LEN = 64

    def __init__(self):
        super().__init__()
        d = self.D_MODEL
        self.tok_emb = nn.Embedding(self.VOCAB, d)
        self.pos_emb = nn.Embedding(self.MAX_LEN, d)
        self.blocks = nn.ModuleList(GptBlock(d, self.N_HEAD) for _ in range(self.N_LAYERS))
        self.ln_f = nn.LayerNorm(d)
        # True = may not attend (a future position)
        causal = torch.triu(torch.ones(self.MAX_LEN, self.MAX_LEN, dtype=torch.bool), diagonal=1)
        self.register_buffer("causal_mask", causal, persistent=False)
        self.register_buffer("pos_ids", torch.arange(self.MAX_LEN), persistent=False)
        nn.init.normal_(self.tok_emb.weight, std=0.02)
        nn.init.normal_(self.pos_emb.weight, std=0.02)

    def forward(self, ids):
        t = ids.size(1)
        x = self.tok_emb(ids) + self.pos_emb(self.pos_ids[:t])
        mask = self.causal_mask[:t, :t]
        for block in self.blocks:
            x = block(x, mask)
        x = self.ln_f(x)
        return F.linear(x, self.tok_emb.weight)  # LM head tied to the token embedding
