"""AutoInt CTR model (Song et al.): 26 categorical fields looked up in one shared embedding
table through int64 per-field offsets, 13 numeric fields turned into tokens as value times a
per-field embedding vector, the 39 field tokens concatenated, then three interacting layers of
multi-head self-attention over the field axis (per-head view + transpose, softmax over fields,
heads merged back by transpose + reshape) with a projected residual and ReLU, and a flattened
logistic output. Returns the click probability and the last layer's attention maps."""

import torch
import torch.nn as nn


class InteractingLayer(nn.Module):
    def __init__(self, in_dim, att_dim, heads):
        super().__init__()
        self.heads = heads
        self.head_dim = att_dim // heads
        self.w_q = nn.Linear(in_dim, att_dim, bias=False)
        self.w_k = nn.Linear(in_dim, att_dim, bias=False)
        self.w_v = nn.Linear(in_dim, att_dim, bias=False)
        self.w_res = nn.Linear(in_dim, att_dim, bias=False)

    def forward(self, e):
        b, m, _ = e.shape
        q = self.w_q(e).view(b, m, self.heads, self.head_dim).transpose(1, 2)
        k = self.w_k(e).view(b, m, self.heads, self.head_dim).transpose(1, 2)
        v = self.w_v(e).view(b, m, self.heads, self.head_dim).transpose(1, 2)
        att = torch.softmax(q @ k.transpose(-1, -2), dim=-1)  # [B, H, M, M]
        out = (att @ v).transpose(1, 2).reshape(b, m, self.heads * self.head_dim)
        return torch.relu(out + self.w_res(e)), att


class Model(nn.Module):
    def __init__(self, vocab_sizes, num_dense, embed_dim, att_dim, heads, num_layers):
        super().__init__()
        offsets = torch.tensor([0] + list(vocab_sizes[:-1])).cumsum(0)
        self.register_buffer("offsets", offsets)
        self.embedding = nn.Embedding(sum(vocab_sizes), embed_dim)
        self.dense_embed = nn.Parameter(torch.randn(num_dense, embed_dim))
        layers = []
        dim = embed_dim
        for _ in range(num_layers):
            layers.append(InteractingLayer(dim, att_dim, heads))
            dim = att_dim
        self.layers = nn.ModuleList(layers)
        num_fields = len(vocab_sizes) + num_dense
        self.out = nn.Linear(num_fields * att_dim, 1)

    def forward(self, sparse_ids, dense):
        # sparse_ids: [B, S] int64 (per-field ids); dense: [B, D] fp32
        sparse_tok = self.embedding(sparse_ids + self.offsets)  # [B, S, E]
        dense_tok = dense.unsqueeze(2) * self.dense_embed  # [B, D, E]
        e = torch.cat([sparse_tok, dense_tok], dim=1)
        att = None
        for layer in self.layers:
            e, att = layer(e)
        logit = self.out(e.flatten(1)).squeeze(1)
        return torch.sigmoid(logit), att


batch = 4096
vocab_sizes = [1460, 583, 100000, 200000, 305, 24, 12517, 633, 3, 93145, 5683, 80000, 3194,
               27, 14992, 150000, 10, 5652, 2173, 4, 120000, 18, 15, 28616, 105, 77000]
num_dense = 13
embed_dim = 16
att_dim = 32
heads = 2


def get_inputs():
    cols = [torch.randint(0, v, (batch,)) for v in vocab_sizes]
    sparse_ids = torch.stack(cols, dim=1)
    dense = torch.log1p(torch.rand(batch, num_dense) * 100.0)
    return [sparse_ids, dense]


def get_init_inputs():
    return [vocab_sizes, num_dense, embed_dim, att_dim, heads, 3]
