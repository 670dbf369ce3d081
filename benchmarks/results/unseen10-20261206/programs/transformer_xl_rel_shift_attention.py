"""Transformer-XL (Dai et al.) relative multi-head attention over the current segment plus
the cached memory: content scores (q + u) k^T, position scores (q + v) R^T against a
sinusoidal table of descending relative distances projected by r_net, the position scores
re-aligned with the pad-one-column-and-reshape "relative shift" trick (a view of a padded
tensor with a different row length), a causal mask offset by the memory length, and a
post-LayerNorm residual as in the original implementation."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, d_model, n_head, d_head):
        super().__init__()
        self.n_head = n_head
        self.d_head = d_head
        self.scale = d_head ** -0.5
        self.qkv_net = nn.Linear(d_model, 3 * n_head * d_head, bias=False)
        self.r_net = nn.Linear(d_model, n_head * d_head, bias=False)
        self.o_net = nn.Linear(n_head * d_head, d_model, bias=False)
        self.r_w_bias = nn.Parameter(torch.randn(n_head, d_head) * 0.02)
        self.r_r_bias = nn.Parameter(torch.randn(n_head, d_head) * 0.02)
        self.layer_norm = nn.LayerNorm(d_model)
        inv_freq = 1.0 / (10000 ** (torch.arange(0.0, d_model, 2.0) / d_model))
        self.register_buffer("inv_freq", inv_freq)

    @staticmethod
    def _rel_shift(x):
        b, h, q, k = x.shape
        padded = F.pad(x, (1, 0))  # [b, h, q, k + 1]
        padded = padded.view(b, h, k + 1, q)
        return padded[:, :, 1:].reshape(b, h, q, k)

    def forward(self, w, mems):
        b, qlen, _ = w.shape
        mlen = mems.shape[1]
        klen = mlen + qlen
        h, d = self.n_head, self.d_head

        pos_seq = torch.arange(klen - 1, -1, -1.0, device=w.device, dtype=w.dtype)
        sinusoid = pos_seq[:, None] * self.inv_freq[None, :]
        pos_emb = torch.cat([sinusoid.sin(), sinusoid.cos()], dim=-1)  # [klen, d_model]
        r = self.r_net(pos_emb).view(klen, h, d)

        cat = torch.cat([mems, w], dim=1)
        heads = self.qkv_net(cat)
        q, k, v = heads.chunk(3, dim=-1)
        q = q[:, -qlen:].view(b, qlen, h, d)
        k = k.view(b, klen, h, d)
        v = v.view(b, klen, h, d)

        ac = torch.einsum("bind,bjnd->bnij", q + self.r_w_bias, k)
        bd = torch.einsum("bind,jnd->bnij", q + self.r_r_bias, r)
        bd = self._rel_shift(bd)
        score = (ac + bd) * self.scale

        i = torch.arange(qlen, device=w.device)[:, None]
        j = torch.arange(klen, device=w.device)[None, :]
        future = j > i + mlen
        score = score.masked_fill(future, float("-inf"))
        prob = torch.softmax(score, dim=-1)
        vec = torch.einsum("bnij,bjnd->bind", prob, v).reshape(b, qlen, h * d)
        return self.layer_norm(w + self.o_net(vec))


batch = 16
seg_len = 512
mem_len = 512
d_model = 512
n_head = 8
d_head = 64


def get_inputs():
    w = torch.randn(batch, seg_len, d_model)
    mems = torch.randn(batch, mem_len, d_model)
    return [w, mems]


def get_init_inputs():
    return [d_model, n_head, d_head]
