"""Heavy-Hitter Oracle (H2O, Zhang et al.) KV-cache eviction after a prefill chunk, fp16 cache:
the last Lq queries attend causally to the S cached keys (fp32 scores, a causal mask built by
comparing int64 key positions with query positions), the attention mass each key received is
summed over the chunk's queries and added to the running fp32 scores, the most recent W keys
are always kept while the top-k older keys by accumulated score are chosen with topk on a
masked copy, the kept positions are sorted ascending (sort of int64 indices) and concatenated
with the recent window, and keys, values and scores are compacted with gather. Returns the
fp16 attention output, the compacted fp16 K and V, the int64 kept positions and the kept
scores."""

import math

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, recent_window, heavy_budget):
        super().__init__()
        self.recent_window = recent_window
        self.heavy_budget = heavy_budget

    def forward(self, q, k_cache, v_cache, acc_scores):
        # q: [B, H, Lq, D] fp16 (the last Lq positions); k_cache, v_cache: [B, H, S, D] fp16;
        # acc_scores: [B, H, S] fp32
        b, h, lq, d = q.shape
        s = k_cache.shape[2]
        scores = torch.matmul(q.float(), k_cache.float().transpose(-1, -2)) / math.sqrt(d)
        key_pos = torch.arange(s, device=q.device)
        query_pos = torch.arange(s - lq, s, device=q.device)
        future = key_pos.view(1, s) > query_pos.view(lq, 1)
        scores = scores.masked_fill(future, float("-inf"))
        att = torch.softmax(scores, dim=-1)  # [B, H, Lq, S]
        out = torch.matmul(att.to(v_cache.dtype), v_cache)

        acc = acc_scores + att.sum(dim=2)
        recent = key_pos >= s - self.recent_window
        older = acc.masked_fill(recent, float("-inf"))
        _, heavy = torch.topk(older, self.heavy_budget, dim=-1)
        heavy, _ = torch.sort(heavy, dim=-1)
        window = key_pos[s - self.recent_window:].expand(b, h, self.recent_window)
        kept = torch.cat([heavy, window], dim=-1)  # [B, H, K + W] int64
        idx = kept.unsqueeze(-1).expand(-1, -1, -1, d)
        k_kept = k_cache.gather(2, idx)
        v_kept = v_cache.gather(2, idx)
        return out, k_kept, v_kept, kept, acc.gather(2, kept)


batch = 4
heads = 32
cache_len = 2048
chunk = 64
head_dim = 128


def get_inputs():
    q = torch.randn(batch, heads, chunk, head_dim).half()
    k_cache = torch.randn(batch, heads, cache_len, head_dim).half()
    v_cache = torch.randn(batch, heads, cache_len, head_dim).half()
    acc_scores = torch.rand(batch, heads, cache_len) * 0.2
    return [q, k_cache, v_cache, acc_scores]


def get_init_inputs():
    return [256, 512]
