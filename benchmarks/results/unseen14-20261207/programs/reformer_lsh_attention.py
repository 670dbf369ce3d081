"""Reformer LSH self-attention (shared QK, 4 hash rounds, chunked attention over sorted buckets)."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, dim, heads, n_buckets, chunk_size, n_hashes=4):
        super().__init__()
        self.heads, self.n_buckets = heads, n_buckets
        self.chunk_size, self.n_hashes = chunk_size, n_hashes
        self.head_dim = dim // heads
        self.to_qk = nn.Linear(dim, dim, bias=False)
        self.to_v = nn.Linear(dim, dim, bias=False)
        self.to_out = nn.Linear(dim, dim)
        # fixed random rotations (one set per hash round), drawn once as in eval mode
        self.register_buffer("rotations",
                             torch.randn(self.head_dim, n_hashes, n_buckets // 2))

    def hash_vectors(self, qk):
        # qk: [B, H, L, d] -> buckets [B, H, n_hashes * L] with per-round offsets
        rotated = torch.einsum("bhtd,dnr->bhntr", qk, self.rotations)
        rotated = torch.cat((rotated, -rotated), dim=-1)
        buckets = rotated.argmax(dim=-1)  # [B, H, n_hashes, L]
        offsets = torch.arange(self.n_hashes, device=qk.device) * self.n_buckets
        return (buckets + offsets[:, None]).flatten(2)

    def forward(self, x):
        b, seq, dim = x.shape
        nh, d, c = self.n_hashes, self.head_dim, self.chunk_size
        qk = self.to_qk(x).view(b, seq, self.heads, d).transpose(1, 2)
        v = self.to_v(x).view(b, seq, self.heads, d).transpose(1, 2)
        buckets = self.hash_vectors(qk)

        ticker = torch.arange(nh * seq, device=x.device)
        sort_keys = seq * buckets + ticker % seq
        sticker = sort_keys.argsort(dim=-1)
        undo_sort = sticker.argsort(dim=-1)
        st = sticker % seq  # source positions, [B, H, nh * L]
        sqk = qk.gather(2, st[..., None].expand(-1, -1, -1, d))
        sv = v.gather(2, st[..., None].expand(-1, -1, -1, d))

        n_chunks = nh * seq // c
        bq_t = st.view(b, self.heads, n_chunks, c)
        bq = sqk.view(b, self.heads, n_chunks, c, d)
        bk = F.normalize(bq, p=2, dim=-1)
        bv = sv.view(b, self.heads, n_chunks, c, d)
        # look one chunk back
        bk = torch.cat((bk, bk.roll(1, dims=2)), dim=3)
        bv = torch.cat((bv, bv.roll(1, dims=2)), dim=3)
        bkv_t = torch.cat((bq_t, bq_t.roll(1, dims=2)), dim=3)

        dots = (bq @ bk.transpose(-1, -2)) * d ** -0.5  # [B, H, n_chunks, c, 2c]
        self_mask = bq_t[..., :, None] == bkv_t[..., None, :]
        dots = dots.masked_fill(self_mask, -1e5)
        lse = dots.logsumexp(dim=-1, keepdim=True)
        probs = torch.exp(dots - lse)
        bo = probs @ bv  # [B, H, n_chunks, c, d]

        so = bo.reshape(b, self.heads, nh * seq, d)
        slogits = lse.reshape(b, self.heads, nh * seq)
        o = so.gather(2, undo_sort[..., None].expand(-1, -1, -1, d))
        logits = slogits.gather(2, undo_sort)
        o = o.view(b, self.heads, nh, seq, d)
        logits = logits.view(b, self.heads, nh, seq, 1)
        weights = torch.exp(logits - logits.logsumexp(dim=2, keepdim=True))
        out = (o * weights).sum(dim=2)  # [B, H, L, d]
        return self.to_out(out.transpose(1, 2).reshape(b, seq, dim))


batch = 4
seq_len = 4096
dim = 512
heads = 8
chunk_size = 64


def get_inputs():
    return [torch.randn(batch, seq_len, dim)]


def get_init_inputs():
    return [dim, heads, seq_len // chunk_size, chunk_size]
