"""Temporal Fusion Transformer (Lim et al.) variable selection network: a gated residual network
(dense, ELU, dense, GLU gate, skip projection, LayerNorm) with a static context vector
broadcast over time turns the flattened variable embeddings into softmax selection weights
over the variable axis; each variable has its own GRN (per-variable weights applied with
einsum); the output is the weighted sum over the variable (middle) axis, plus the weights."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class GatedResidualNetwork(nn.Module):
    def __init__(self, in_dim, hidden_dim, out_dim, context_dim):
        super().__init__()
        self.skip = nn.Linear(in_dim, out_dim)
        self.fc1 = nn.Linear(in_dim, hidden_dim)
        self.context = nn.Linear(context_dim, hidden_dim, bias=False)
        self.fc2 = nn.Linear(hidden_dim, hidden_dim)
        self.gate = nn.Linear(hidden_dim, 2 * out_dim)
        self.norm = nn.LayerNorm(out_dim)

    def forward(self, a, c):
        # a: [B, T, in_dim]; c: [B, context_dim]
        h = F.elu(self.fc1(a) + self.context(c).unsqueeze(1))
        h = self.fc2(h)
        return self.norm(self.skip(a) + F.glu(self.gate(h), dim=-1))


class Model(nn.Module):
    def __init__(self, num_vars, var_dim, hidden_dim, context_dim):
        super().__init__()
        self.selector = GatedResidualNetwork(num_vars * var_dim, hidden_dim, num_vars,
                                             context_dim)
        self.w1 = nn.Parameter(torch.randn(num_vars, var_dim, hidden_dim) / math.sqrt(var_dim))
        self.b1 = nn.Parameter(torch.zeros(num_vars, hidden_dim))
        self.w2 = nn.Parameter(torch.randn(num_vars, hidden_dim, hidden_dim)
                               / math.sqrt(hidden_dim))
        self.b2 = nn.Parameter(torch.zeros(num_vars, hidden_dim))
        self.wg = nn.Parameter(torch.randn(num_vars, hidden_dim, 2 * var_dim)
                               / math.sqrt(hidden_dim))
        self.bg = nn.Parameter(torch.zeros(num_vars, 2 * var_dim))
        self.norm = nn.LayerNorm(var_dim)

    def forward(self, x, context):
        # x: [B, T, V, D] embedded variables; context: [B, context_dim] static covariates
        weights = torch.softmax(self.selector(x.flatten(2), context), dim=-1)  # [B, T, V]
        h = F.elu(torch.einsum("btvd,vdh->btvh", x, self.w1) + self.b1)
        h = torch.einsum("btvh,vhk->btvk", h, self.w2) + self.b2
        g = F.glu(torch.einsum("btvh,vho->btvo", h, self.wg) + self.bg, dim=-1)
        processed = self.norm(x + g)  # [B, T, V, D]
        combined = (weights.unsqueeze(-1) * processed).sum(dim=2)  # [B, T, D]
        return combined, weights


batch = 64
seq_len = 192
num_vars = 16
var_dim = 64
hidden_dim = 64
context_dim = 64


def get_inputs():
    x = torch.randn(batch, seq_len, num_vars, var_dim)
    context = torch.randn(batch, context_dim)
    return [x, context]


def get_init_inputs():
    return [num_vars, var_dim, hidden_dim, context_dim]
