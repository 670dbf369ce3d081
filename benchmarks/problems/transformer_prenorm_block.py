"""Pre-norm transformer block: LayerNorm, multi-head self-attention, LayerNorm, GELU MLP."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, num_heads, head_dim, mlp_hidden):
        super().__init__()
        hidden = num_heads * head_dim
        self.num_heads = num_heads
        self.head_dim = head_dim
        self.norm1 = nn.LayerNorm(hidden)
        self.q_proj = nn.Linear(hidden, hidden)
        self.k_proj = nn.Linear(hidden, hidden)
        self.v_proj = nn.Linear(hidden, hidden)
        self.out_proj = nn.Linear(hidden, hidden)
        self.norm2 = nn.LayerNorm(hidden)
        self.fc1 = nn.Linear(hidden, mlp_hidden)
        self.fc2 = nn.Linear(mlp_hidden, hidden)

    def _heads(self, t):
        b, s, _ = t.shape
        return t.reshape(b, s, self.num_heads, self.head_dim).transpose(1, 2)

    def forward(self, x):
        b, s, h = x.shape
        y = self.norm1(x)
        q = self._heads(self.q_proj(y))
        k = self._heads(self.k_proj(y))
        v = self._heads(self.v_proj(y))
        scores = torch.matmul(q, k.transpose(-2, -1)) * (self.head_dim**-0.5)
        attn = torch.softmax(scores, dim=-1)
        ctx = torch.matmul(attn, v).transpose(1, 2).reshape(b, s, h)
        x = x + self.out_proj(ctx)
        x = x + self.fc2(F.gelu(self.fc1(self.norm2(x))))
        return x


batch = 8
seq = 1024
num_heads = 8
head_dim = 128
mlp_hidden = 4096


def get_inputs():
    return [torch.randn(batch, seq, num_heads * head_dim)]


def get_init_inputs():
    return [num_heads, head_dim, mlp_hidden]
