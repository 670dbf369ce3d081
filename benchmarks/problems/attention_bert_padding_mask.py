"""BERT self-attention: Q/K/V Linears, split heads, scores / sqrt(head_size), an additive
padding mask (1 - mask) * finfo.min, softmax, @ V, merge heads, output Linear."""

import math

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, num_heads, head_dim):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = head_dim
        hidden = num_heads * head_dim
        self.query = nn.Linear(hidden, hidden)
        self.key = nn.Linear(hidden, hidden)
        self.value = nn.Linear(hidden, hidden)
        self.out = nn.Linear(hidden, hidden)

    def split(self, x):
        b, t, _ = x.shape
        return x.view(b, t, self.num_heads, self.head_dim).permute(0, 2, 1, 3)

    def forward(self, x, attention_mask):
        q, k, v = self.split(self.query(x)), self.split(self.key(x)), self.split(self.value(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim)
        ext = (1.0 - attention_mask[:, None, None, :].to(x.dtype)) * torch.finfo(x.dtype).min
        probs = torch.softmax(scores + ext, dim=-1)
        ctx = torch.matmul(probs, v).permute(0, 2, 1, 3).contiguous()
        b, t = ctx.shape[:2]
        return self.out(ctx.view(b, t, self.num_heads * self.head_dim))


batch = 8
num_heads = 12  # below 16: a constant
seq = 1024
head_dim = 64


def get_inputs():
    lengths = torch.randint(seq // 4, seq + 1, (batch,))
    mask = (torch.arange(seq)[None, :] < lengths[:, None]).long()
    return [torch.randn(batch, seq, num_heads * head_dim), mask]


def get_init_inputs():
    return [num_heads, head_dim]
