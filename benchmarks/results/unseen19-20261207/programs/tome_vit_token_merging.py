"""A ViT encoder block with Token Merging (ToMe, Bolya et al.) between attention and MLP:
multi-head self-attention with proportional attention (log of each token's merged size added to
the key logits), the mean of the per-head keys as the similarity metric, bipartite soft matching
between even- and odd-indexed tokens (cosine similarity via bmm, the class token protected with
-inf, a max over partners, a descending argsort that picks the r most similar sources, the kept
sources re-sorted into their original order so the class token stays first), gather of unmerged
and merged sources and a size-weighted scatter_reduce('sum') of the merged ones into their
destinations, then LayerNorm + GELU MLP on the shortened sequence; returns the merged tokens and
their updated sizes."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, dim, num_heads, mlp_ratio, merge_fraction):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = dim // num_heads
        self.merge_fraction = merge_fraction
        self.norm1 = nn.LayerNorm(dim, eps=1e-6)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.norm2 = nn.LayerNorm(dim, eps=1e-6)
        self.fc1 = nn.Linear(dim, int(dim * mlp_ratio))
        self.fc2 = nn.Linear(int(dim * mlp_ratio), dim)

    def forward(self, x, size):
        # x: [B, N, C] with the class token at index 0; size: [B, N, 1] tokens already merged
        b, n, c = x.shape
        h, d = self.num_heads, self.head_dim
        qkv = self.qkv(self.norm1(x)).view(b, n, 3, h, d).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        logits = (q @ k.transpose(-2, -1)) / math.sqrt(d)
        logits = logits + size.log().view(b, 1, 1, n)
        attn = logits.softmax(dim=-1)
        y = (attn @ v).transpose(1, 2).reshape(b, n, c)
        x = x + self.proj(y)
        metric = k.mean(dim=1)  # [B, N, d]

        # bipartite soft matching
        metric = metric / metric.norm(dim=-1, keepdim=True)
        a, bm = metric[:, ::2, :], metric[:, 1::2, :]
        scores = a @ bm.transpose(-1, -2)  # [B, Na, Nb]
        scores[:, 0, :] = float("-inf")  # never merge the class token
        na = a.shape[1]
        r = max(1, min(int(na * self.merge_fraction), na - 1))
        node_max, node_idx = scores.max(dim=-1)
        edge_idx = node_max.argsort(dim=-1, descending=True).unsqueeze(-1)
        unm_idx = edge_idx[:, r:, :].sort(dim=1).values  # keep order: class token stays first
        src_idx = edge_idx[:, :r, :]
        dst_idx = node_idx.unsqueeze(-1).gather(1, src_idx)

        def merge(t):
            ch = t.shape[-1]
            src, dst = t[:, ::2, :], t[:, 1::2, :]
            unm = src.gather(1, unm_idx.expand(-1, -1, ch))
            moved = src.gather(1, src_idx.expand(-1, -1, ch))
            dst = dst.scatter_reduce(1, dst_idx.expand(-1, -1, ch), moved, reduce="sum")
            return torch.cat([unm, dst], dim=1)

        merged = merge(x * size)
        new_size = merge(size)
        x = merged / new_size
        x = x + self.fc2(F.gelu(self.fc1(self.norm2(x))))
        return x, new_size


batch = 64
tokens = 197
dim = 768
heads = 12


def get_inputs():
    x = torch.randn(batch, tokens, dim)
    size = torch.randint(1, 4, (batch, tokens, 1)).float()
    return [x, size]


def get_init_inputs():
    return [dim, heads, 4.0, 0.25]
