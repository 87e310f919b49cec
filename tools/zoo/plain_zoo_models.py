"""Hand-written sequence models for switchyard's plain zoo (see tools/zoo/export_plain_zoo.py).

Each is written the way its ecosystem writes it, because those idioms are what a plain
trace records: sizes read from the inputs (`x.size(1)`, `torch.arange(seq_len)`), masks
built at run time, `view`s whose shapes come from other tensors' sizes.

- Seq2SeqTransformer: nn.Transformer encoder-decoder over token ids (src, tgt), with the
  causal target mask made from tgt's length by nn.Transformer.generate_square_subsequent_mask.
- LstmTagger: a 2-layer bidirectional batch_first nn.LSTM called without an initial state
  (the trace builds the zero state from the batch size), mean-pooled into a linear head.
- GruSeq: a 2-layer sequence-major nn.GRU called with its initial state as a second input;
  returns the output sequence and the final state.
- HfBert: a BERT encoder laid out like Hugging Face's BertModel (word + position +
  token-type embeddings, positions from torch.arange(seq_len), the additive mask
  (1.0 - mask[:, None, None, :]) * -10000.0, transpose_for_scores views), returning the
  last hidden state and the tanh pooler output.
- LlamaLike: a decoder laid out like Hugging Face's LlamaModel (RMSNorm, rotary embeddings
  computed from positions at run time, grouped-query attention with repeat_kv, SwiGLU MLP,
  the causal mask built from the sequence length with masked_fill_), returning logits.

Hugging Face's input idioms, with inputs of the dtypes users pass (int64 masks from a
tokenizer, float pixel values), none of which the model's ops pin:
- DistilBertMasked: DistilBERT's attention, the int64 attention_mask used as
  masked_fill((mask == 0).view(...).expand_as(scores), finfo.min).
- MeanPoolEncoder: an int64 `mask` in (1.0 - mask[:, None, None, :]) * -10000.0 (no .to())
  and multiplied into the hidden states for mean pooling.
- ClipVision: CLIP's vision tower; float pixel_values go through
  pixel_values.to(dtype=patch_embedding.weight.dtype) before the patch conv.

Requires Debian's /usr/bin/python3 (python3-torch).
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Seq2SeqTransformer(nn.Module):
    VOCAB = 500
    D_MODEL = 64
    MAX_LEN = 64

    def __init__(self):
        super().__init__()
        d = self.D_MODEL
        self.src_emb = nn.Embedding(self.VOCAB, d)
        self.tgt_emb = nn.Embedding(self.VOCAB, d)
        self.pos_emb = nn.Parameter(torch.randn(self.MAX_LEN, d) * 0.1)
        self.transformer = nn.Transformer(d_model=d, nhead=4, num_encoder_layers=2,
                                          num_decoder_layers=2, dim_feedforward=128,
                                          dropout=0.1, batch_first=True)
        self.generator = nn.Linear(d, self.VOCAB)

    def forward(self, src, tgt):
        s = self.src_emb(src) + self.pos_emb[: src.size(1)]
        t = self.tgt_emb(tgt) + self.pos_emb[: tgt.size(1)]
        tgt_mask = nn.Transformer.generate_square_subsequent_mask(tgt.size(1))
        out = self.transformer(s, t, tgt_mask=tgt_mask)
        return self.generator(out)


class LstmTagger(nn.Module):
    FEATURES = 24
    HIDDEN = 48
    NUM_CLASSES = 10

    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(self.FEATURES, self.HIDDEN, num_layers=2, batch_first=True,
                            bidirectional=True)
        self.head = nn.Linear(2 * self.HIDDEN, self.NUM_CLASSES)

    def forward(self, x):  # x: [B, T, FEATURES]
        out, _ = self.lstm(x)  # no initial state: zeros of [4, B, HIDDEN]
        return self.head(out.mean(dim=1))


class GruSeq(nn.Module):
    FEATURES = 24
    HIDDEN = 40
    LAYERS = 2

    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(self.FEATURES, self.HIDDEN, num_layers=self.LAYERS)
        self.proj = nn.Linear(self.HIDDEN, self.FEATURES)

    def forward(self, x, h0):  # x: [T, B, FEATURES], h0: [LAYERS, B, HIDDEN]
        out, h_n = self.gru(x, h0)
        return self.proj(out), h_n


class BertEmbeddings(nn.Module):
    def __init__(self, vocab, d, max_pos, type_vocab):
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab, d, padding_idx=0)
        self.position_embeddings = nn.Embedding(max_pos, d)
        self.token_type_embeddings = nn.Embedding(type_vocab, d)
        self.LayerNorm = nn.LayerNorm(d, eps=1e-12)
        self.dropout = nn.Dropout(0.1)

    def forward(self, input_ids, token_type_ids):
        seq_length = input_ids.size(1)
        position_ids = torch.arange(seq_length, dtype=torch.long, device=input_ids.device)
        position_ids = position_ids.unsqueeze(0).expand_as(input_ids)
        x = self.word_embeddings(input_ids) + self.position_embeddings(position_ids) \
            + self.token_type_embeddings(token_type_ids)
        return self.dropout(self.LayerNorm(x))


class BertSelfAttention(nn.Module):
    def __init__(self, d, n_heads):
        super().__init__()
        self.num_attention_heads = n_heads
        self.attention_head_size = d // n_heads
        self.all_head_size = d
        self.query = nn.Linear(d, d)
        self.key = nn.Linear(d, d)
        self.value = nn.Linear(d, d)
        self.dropout = nn.Dropout(0.1)

    def transpose_for_scores(self, x):
        new_x_shape = x.size()[:-1] + (self.num_attention_heads, self.attention_head_size)
        return x.view(new_x_shape).permute(0, 2, 1, 3)

    def forward(self, hidden_states, attention_mask):
        q = self.transpose_for_scores(self.query(hidden_states))
        k = self.transpose_for_scores(self.key(hidden_states))
        v = self.transpose_for_scores(self.value(hidden_states))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.attention_head_size)
        scores = scores + attention_mask
        probs = self.dropout(nn.functional.softmax(scores, dim=-1))
        context = torch.matmul(probs, v).permute(0, 2, 1, 3).contiguous()
        new_shape = context.size()[:-2] + (self.all_head_size,)
        return context.view(new_shape)


class BertLayer(nn.Module):
    def __init__(self, d, n_heads, d_ff):
        super().__init__()
        self.attention = BertSelfAttention(d, n_heads)
        self.attention_output = nn.Linear(d, d)
        self.attention_norm = nn.LayerNorm(d, eps=1e-12)
        self.intermediate = nn.Linear(d, d_ff)
        self.output = nn.Linear(d_ff, d)
        self.output_norm = nn.LayerNorm(d, eps=1e-12)
        self.dropout = nn.Dropout(0.1)

    def forward(self, hidden_states, attention_mask):
        a = self.attention(hidden_states, attention_mask)
        h = self.attention_norm(self.dropout(self.attention_output(a)) + hidden_states)
        i = F.gelu(self.intermediate(h))
        return self.output_norm(self.dropout(self.output(i)) + h)


class HfBert(nn.Module):
    VOCAB = 1000
    D_MODEL = 128
    N_HEADS = 4
    D_FF = 512
    N_LAYERS = 2
    MAX_POS = 64
    TYPE_VOCAB = 2

    def __init__(self):
        super().__init__()
        self.embeddings = BertEmbeddings(self.VOCAB, self.D_MODEL, self.MAX_POS, self.TYPE_VOCAB)
        self.layer = nn.ModuleList(BertLayer(self.D_MODEL, self.N_HEADS, self.D_FF)
                                   for _ in range(self.N_LAYERS))
        self.pooler = nn.Linear(self.D_MODEL, self.D_MODEL)
        for m in self.modules():  # BERT's initializer_range
            if isinstance(m, (nn.Linear, nn.Embedding)):
                nn.init.normal_(m.weight, std=0.02)

    def forward(self, input_ids, token_type_ids, attention_mask):
        extended = attention_mask[:, None, None, :].to(dtype=torch.float32)
        extended = (1.0 - extended) * -10000.0
        h = self.embeddings(input_ids, token_type_ids)
        for layer in self.layer:
            h = layer(h, extended)
        pooled = torch.tanh(self.pooler(h[:, 0]))
        return h, pooled


class LlamaRMSNorm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.variance_epsilon = eps

    def forward(self, hidden_states):
        variance = hidden_states.to(torch.float32).pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        return self.weight * hidden_states


class LlamaRotaryEmbedding(nn.Module):
    def __init__(self, head_dim, base=10000.0):
        super().__init__()
        inv_freq = 1.0 / (base ** (torch.arange(0, head_dim, 2).float() / head_dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    def forward(self, x, seq_len):
        t = torch.arange(seq_len, device=x.device, dtype=self.inv_freq.dtype)
        freqs = torch.einsum("i,j->ij", t, self.inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos()[None, None, :, :], emb.sin()[None, None, :, :]


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def repeat_kv(hidden_states, n_rep):
    batch, num_key_value_heads, slen, head_dim = hidden_states.shape
    if n_rep == 1:
        return hidden_states
    hidden_states = hidden_states[:, :, None, :, :].expand(batch, num_key_value_heads, n_rep,
                                                           slen, head_dim)
    return hidden_states.reshape(batch, num_key_value_heads * n_rep, slen, head_dim)


class LlamaAttention(nn.Module):
    def __init__(self, d, n_heads, n_kv_heads):
        super().__init__()
        self.num_heads, self.num_key_value_heads = n_heads, n_kv_heads
        self.head_dim = d // n_heads
        self.num_key_value_groups = n_heads // n_kv_heads
        self.q_proj = nn.Linear(d, n_heads * self.head_dim, bias=False)
        self.k_proj = nn.Linear(d, n_kv_heads * self.head_dim, bias=False)
        self.v_proj = nn.Linear(d, n_kv_heads * self.head_dim, bias=False)
        self.o_proj = nn.Linear(n_heads * self.head_dim, d, bias=False)
        self.rotary_emb = LlamaRotaryEmbedding(self.head_dim)

    def forward(self, hidden_states, attention_mask):
        bsz, q_len, _ = hidden_states.size()
        q = self.q_proj(hidden_states).view(bsz, q_len, self.num_heads, self.head_dim)
        k = self.k_proj(hidden_states).view(bsz, q_len, self.num_key_value_heads, self.head_dim)
        v = self.v_proj(hidden_states).view(bsz, q_len, self.num_key_value_heads, self.head_dim)
        q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
        cos, sin = self.rotary_emb(v, seq_len=q_len)
        q = (q * cos) + (rotate_half(q) * sin)
        k = (k * cos) + (rotate_half(k) * sin)
        k = repeat_kv(k, self.num_key_value_groups)
        v = repeat_kv(v, self.num_key_value_groups)
        scores = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(self.head_dim)
        scores = scores + attention_mask
        probs = nn.functional.softmax(scores, dim=-1, dtype=torch.float32).to(q.dtype)
        out = torch.matmul(probs, v).transpose(1, 2).contiguous()
        return self.o_proj(out.reshape(bsz, q_len, self.num_heads * self.head_dim))


class LlamaMLP(nn.Module):
    def __init__(self, d, d_ff):
        super().__init__()
        self.gate_proj = nn.Linear(d, d_ff, bias=False)
        self.up_proj = nn.Linear(d, d_ff, bias=False)
        self.down_proj = nn.Linear(d_ff, d, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class LlamaDecoderLayer(nn.Module):
    def __init__(self, d, n_heads, n_kv_heads, d_ff):
        super().__init__()
        self.self_attn = LlamaAttention(d, n_heads, n_kv_heads)
        self.mlp = LlamaMLP(d, d_ff)
        self.input_layernorm = LlamaRMSNorm(d)
        self.post_attention_layernorm = LlamaRMSNorm(d)

    def forward(self, hidden_states, attention_mask):
        h = hidden_states + self.self_attn(self.input_layernorm(hidden_states), attention_mask)
        return h + self.mlp(self.post_attention_layernorm(h))


def make_causal_mask(bsz, tgt_len, dtype, device):
    """Hugging Face's _make_causal_mask (transformers 4.3x) without a KV cache; full() takes
    the dtype so that the float64 reference can run it."""
    mask = torch.full((tgt_len, tgt_len), torch.finfo(dtype).min, dtype=dtype, device=device)
    mask_cond = torch.arange(mask.size(-1), device=device)
    mask.masked_fill_(mask_cond < (mask_cond + 1).view(mask.size(-1), 1), 0)
    mask = mask.to(dtype)
    return mask[None, None, :, :].expand(bsz, 1, tgt_len, tgt_len)


class LlamaLike(nn.Module):
    VOCAB = 1000
    D_MODEL = 128
    N_HEADS = 4
    N_KV_HEADS = 2
    D_FF = 344
    N_LAYERS = 2

    def __init__(self):
        super().__init__()
        d = self.D_MODEL
        self.embed_tokens = nn.Embedding(self.VOCAB, d)
        self.layers = nn.ModuleList(LlamaDecoderLayer(d, self.N_HEADS, self.N_KV_HEADS, self.D_FF)
                                    for _ in range(self.N_LAYERS))
        self.norm = LlamaRMSNorm(d)
        self.lm_head = nn.Linear(d, self.VOCAB, bias=False)
        for m in self.modules():
            if isinstance(m, (nn.Linear, nn.Embedding)):
                nn.init.normal_(m.weight, std=0.02)
        for m in self.modules():  # RMSNorm weights off 1.0 so that they are tested
            if isinstance(m, LlamaRMSNorm):
                nn.init.uniform_(m.weight, 0.8, 1.2)

    def forward(self, input_ids):
        bsz, seq_len = input_ids.shape
        h = self.embed_tokens(input_ids)
        mask = make_causal_mask(bsz, seq_len, h.dtype, h.device)
        for layer in self.layers:
            h = layer(h, mask)
        return self.lm_head(self.norm(h))


# ---- Hugging Face's input idioms: masks and pixel values of whatever dtype the user has.
# Tokenizers give int64 attention masks; PyTorch promotes them where they meet floats.

class DistilBertLikeAttention(nn.Module):
    """DistilBERT's MultiHeadSelfAttention: the int64 mask enters as `mask == 0`, then
    masked_fill with the dtype's minimum."""

    def __init__(self, d, n_heads):
        super().__init__()
        self.n_heads, self.dim = n_heads, d
        self.q_lin, self.k_lin = nn.Linear(d, d), nn.Linear(d, d)
        self.v_lin, self.out_lin = nn.Linear(d, d), nn.Linear(d, d)
        self.dropout = nn.Dropout(0.1)

    def forward(self, query, key, value, mask):
        bs, q_length, dim = query.size()
        k_length = key.size(1)
        dim_per_head = self.dim // self.n_heads
        mask_reshp = (bs, 1, 1, k_length)

        def shape(x):
            return x.view(bs, -1, self.n_heads, dim_per_head).transpose(1, 2)

        def unshape(x):
            return x.transpose(1, 2).contiguous().view(bs, -1, self.n_heads * dim_per_head)

        q = shape(self.q_lin(query)) / math.sqrt(dim_per_head)
        k, v = shape(self.k_lin(key)), shape(self.v_lin(value))
        scores = torch.matmul(q, k.transpose(2, 3))
        mask = (mask == 0).view(mask_reshp).expand_as(scores)
        scores = scores.masked_fill(mask, torch.tensor(torch.finfo(scores.dtype).min))
        weights = self.dropout(nn.functional.softmax(scores, dim=-1))
        return self.out_lin(unshape(torch.matmul(weights, v)))


class DistilBertLikeBlock(nn.Module):
    def __init__(self, d, n_heads, d_ff):
        super().__init__()
        self.attention = DistilBertLikeAttention(d, n_heads)
        self.sa_layer_norm = nn.LayerNorm(d, eps=1e-12)
        self.lin1, self.lin2 = nn.Linear(d, d_ff), nn.Linear(d_ff, d)
        self.output_layer_norm = nn.LayerNorm(d, eps=1e-12)

    def forward(self, x, attn_mask):
        sa = self.sa_layer_norm(self.attention(x, x, x, attn_mask) + x)
        return self.output_layer_norm(self.lin2(F.gelu(self.lin1(sa))) + sa)


class DistilBertMasked(nn.Module):
    """A DistilBERT-like encoder called as (input_ids, attention_mask) with an int64 mask."""
    VOCAB = 500
    D_MODEL = 64
    MAX_POS = 64

    def __init__(self):
        super().__init__()
        d = self.D_MODEL
        self.word_embeddings = nn.Embedding(self.VOCAB, d, padding_idx=0)
        self.position_embeddings = nn.Embedding(self.MAX_POS, d)
        self.LayerNorm = nn.LayerNorm(d, eps=1e-12)
        self.layer = nn.ModuleList(DistilBertLikeBlock(d, 4, 128) for _ in range(2))

    def forward(self, input_ids, attention_mask):
        seq_length = input_ids.size(1)
        position_ids = torch.arange(seq_length, dtype=torch.long, device=input_ids.device)
        position_ids = position_ids.unsqueeze(0).expand_as(input_ids)
        h = self.LayerNorm(self.word_embeddings(input_ids) + self.position_embeddings(position_ids))
        for block in self.layer:
            h = block(h, attention_mask)
        return h


class MeanPoolEncoder(nn.Module):
    """A sentence-embedding model: an int64 `mask` turned into the additive bias
    (1.0 - mask[:, None, None, :]) * -10000.0 (no .to()), and multiplied into the hidden
    states for mean pooling, as sentence-transformers' pooling does."""
    VOCAB = 500
    D_MODEL = 64

    def __init__(self):
        super().__init__()
        d = self.D_MODEL
        self.embed = nn.Embedding(self.VOCAB, d, padding_idx=0)
        self.layer = BertLayer(d, 4, 128)
        self.head = nn.Linear(d, 32)

    def forward(self, input_ids, mask):
        bias = (1.0 - mask[:, None, None, :]) * -10000.0
        h = self.layer(self.embed(input_ids), bias)
        summed = (h * mask.unsqueeze(-1)).sum(1)
        counts = mask.sum(1, keepdim=True).clamp(min=1)
        return self.head(summed / counts)


class ClipVisionEmbeddings(nn.Module):
    def __init__(self, d, image, patch):
        super().__init__()
        self.class_embedding = nn.Parameter(torch.randn(d))
        self.patch_embedding = nn.Conv2d(3, d, kernel_size=patch, stride=patch, bias=False)
        self.num_positions = (image // patch) ** 2 + 1
        self.position_embedding = nn.Embedding(self.num_positions, d)
        self.register_buffer("position_ids", torch.arange(self.num_positions).expand((1, -1)),
                             persistent=False)

    def forward(self, pixel_values):
        batch_size = pixel_values.shape[0]
        target_dtype = self.patch_embedding.weight.dtype
        patch_embeds = self.patch_embedding(pixel_values.to(dtype=target_dtype))
        patch_embeds = patch_embeds.flatten(2).transpose(1, 2)
        class_embeds = self.class_embedding.expand(batch_size, 1, -1)
        embeddings = torch.cat([class_embeds, patch_embeds], dim=1)
        return embeddings + self.position_embedding(self.position_ids)


class ClipAttention(nn.Module):
    def __init__(self, d, n_heads):
        super().__init__()
        self.embed_dim, self.num_heads, self.head_dim = d, n_heads, d // n_heads
        self.scale = self.head_dim ** -0.5
        self.k_proj, self.v_proj = nn.Linear(d, d), nn.Linear(d, d)
        self.q_proj, self.out_proj = nn.Linear(d, d), nn.Linear(d, d)

    def _shape(self, tensor, seq_len, bsz):
        return tensor.view(bsz, seq_len, self.num_heads, self.head_dim).transpose(1, 2).contiguous()

    def forward(self, hidden_states):
        bsz, tgt_len, embed_dim = hidden_states.size()
        query_states = self.q_proj(hidden_states) * self.scale
        key_states = self._shape(self.k_proj(hidden_states), -1, bsz)
        value_states = self._shape(self.v_proj(hidden_states), -1, bsz)
        proj_shape = (bsz * self.num_heads, -1, self.head_dim)
        query_states = self._shape(query_states, tgt_len, bsz).view(*proj_shape)
        key_states, value_states = key_states.view(*proj_shape), value_states.view(*proj_shape)
        attn_weights = nn.functional.softmax(torch.bmm(query_states, key_states.transpose(1, 2)), dim=-1)
        attn_output = torch.bmm(attn_weights, value_states)
        attn_output = attn_output.view(bsz, self.num_heads, tgt_len, self.head_dim).transpose(1, 2)
        return self.out_proj(attn_output.reshape(bsz, tgt_len, embed_dim))


class ClipEncoderLayer(nn.Module):
    def __init__(self, d, n_heads, d_ff):
        super().__init__()
        self.self_attn = ClipAttention(d, n_heads)
        self.layer_norm1, self.layer_norm2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.fc1, self.fc2 = nn.Linear(d, d_ff), nn.Linear(d_ff, d)

    def forward(self, hidden_states):
        hidden_states = hidden_states + self.self_attn(self.layer_norm1(hidden_states))
        h = self.fc1(self.layer_norm2(hidden_states))
        return hidden_states + self.fc2(h * torch.sigmoid(1.702 * h))  # quick_gelu


class ClipVision(nn.Module):
    """CLIP's vision tower (Hugging Face's CLIPVisionTransformer), called with float
    pixel_values that it converts to the patch embedding's dtype first
    (pixel_values.to(dtype=target_dtype)), returning the last hidden state and the pooled
    class token."""
    IMAGE = 32
    PATCH = 8
    D_MODEL = 64

    def __init__(self):
        super().__init__()
        d = self.D_MODEL
        self.embeddings = ClipVisionEmbeddings(d, self.IMAGE, self.PATCH)
        self.pre_layrnorm = nn.LayerNorm(d)
        self.layers = nn.ModuleList(ClipEncoderLayer(d, 4, 128) for _ in range(2))
        self.post_layernorm = nn.LayerNorm(d)

    def forward(self, pixel_values):
        h = self.pre_layrnorm(self.embeddings(pixel_values))
        for layer in self.layers:
            h = layer(h)
        return h, self.post_layernorm(h[:, 0, :])
