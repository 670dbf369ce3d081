"""Informer encoder layer: ProbSparse self-attention (sampled query sparsity, top-u queries) and
distilling conv."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, d_model, seq_len, heads=8, factor=5, d_ff_mult=4):
        super().__init__()
        self.heads, self.factor = heads, factor
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.out_proj = nn.Linear(d_model, d_model)
        self.norm1 = nn.LayerNorm(d_model)
        self.ff1 = nn.Conv1d(d_model, d_ff_mult * d_model, 1)
        self.ff2 = nn.Conv1d(d_ff_mult * d_model, d_model, 1)
        self.norm2 = nn.LayerNorm(d_model)
        # distilling layer: circular conv, BatchNorm (eval statistics), ELU, strided max-pool
        self.distil_conv = nn.Conv1d(d_model, d_model, 3, padding=1, padding_mode="circular")
        self.distil_bn = nn.BatchNorm1d(d_model)
        with torch.no_grad():
            self.distil_bn.running_mean.uniform_(-0.2, 0.2)
            self.distil_bn.running_var.uniform_(0.5, 1.5)
        self.eval()
        # the key sample of each query, drawn once (a fixed draw makes the layer deterministic)
        sample_k = min(factor * math.ceil(math.log(seq_len)), seq_len)
        gen = torch.Generator().manual_seed(1234)
        self.register_buffer("index_sample", torch.randint(seq_len, (seq_len, sample_k),
                                                           generator=gen))

    def prob_attention(self, q, k, v):
        b, h, seq, d = q.shape
        n_top = min(self.factor * math.ceil(math.log(seq)), seq)
        # sparsity measure from sampled keys: max - mean of q.k over the sample
        k_sample = k[:, :, self.index_sample, :]  # [B, H, L, U, D]
        qk_sample = (q.unsqueeze(-2) @ k_sample.transpose(-2, -1)).squeeze(-2)
        sparsity = qk_sample.max(dim=-1).values - qk_sample.sum(dim=-1) / seq
        top = sparsity.topk(n_top, dim=-1, sorted=False).indices  # [B, H, u]
        q_top = q.gather(2, top.unsqueeze(-1).expand(-1, -1, -1, d))
        scores = (q_top @ k.transpose(-2, -1)) / math.sqrt(d)
        attn = torch.softmax(scores, dim=-1)
        # lazy queries get the mean of V; active queries are scattered in
        context = v.mean(dim=2, keepdim=True).expand(b, h, seq, d).clone()
        context.scatter_(2, top.unsqueeze(-1).expand(-1, -1, -1, d), attn @ v)
        return context

    def forward(self, x):
        b, seq, dm = x.shape
        h = self.heads
        q = self.q_proj(x).view(b, seq, h, -1).transpose(1, 2)
        k = self.k_proj(x).view(b, seq, h, -1).transpose(1, 2)
        v = self.v_proj(x).view(b, seq, h, -1).transpose(1, 2)
        ctx = self.prob_attention(q, k, v).transpose(1, 2).reshape(b, seq, dm)
        x = self.norm1(x + self.out_proj(ctx))
        y = self.ff2(F.gelu(self.ff1(x.transpose(1, 2)))).transpose(1, 2)
        x = self.norm2(x + y)
        z = F.elu(self.distil_bn(self.distil_conv(x.transpose(1, 2))))
        z = F.max_pool1d(z, kernel_size=3, stride=2, padding=1)
        return z.transpose(1, 2)  # [B, L / 2, d_model]


batch = 8
seq_len = 96
d_model = 512


def get_inputs():
    return [torch.randn(batch, seq_len, d_model)]


def get_init_inputs():
    return [d_model, seq_len]
