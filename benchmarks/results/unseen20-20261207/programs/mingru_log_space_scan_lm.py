"""minGRU language model ("Were RNNs All We Needed?", Feng et al. 2024) with the
log-space parallel scan.

Each block: RMSNorm -> causal depthwise conv1d -> minGRU (gate z and candidate h~ from one
linear; log(1 - z) via -softplus, log g(h~) via where/softplus/log) evaluated for all steps
at once as a_star = cumsum(log coeffs), h = exp(a_star + logcumsumexp(log_values - a_star))
-> out projection + residual -> RMSNorm -> GEGLU FFN + residual. Uses embedding, cumsum,
logcumsumexp, softplus, where, chunk, left-padded conv1d; returns tied logits + last states.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def log_g(x):
    return torch.where(x >= 0, torch.log(F.relu(x) + 0.5), -F.softplus(-x))


class MinGRUBlock(nn.Module):
    def __init__(self, dim, expansion, conv_kernel, ff_mult):
        super().__init__()
        inner = int(dim * expansion)
        self.norm1 = RMSNorm(dim)
        self.conv = nn.Conv1d(dim, dim, conv_kernel, groups=dim)
        self.conv_kernel = conv_kernel
        self.to_hidden_and_gate = nn.Linear(dim, 2 * inner, bias=False)
        self.to_out = nn.Linear(inner, dim, bias=False)
        self.norm2 = RMSNorm(dim)
        self.ff_in = nn.Linear(dim, 2 * dim * ff_mult)
        self.ff_out = nn.Linear(dim * ff_mult, dim)

    def forward(self, x):
        y = self.norm1(x).transpose(1, 2)
        y = self.conv(F.pad(y, (self.conv_kernel - 1, 0))).transpose(1, 2)
        hidden, gate = self.to_hidden_and_gate(y).chunk(2, dim=-1)
        log_coeffs = -F.softplus(gate)  # log(1 - z)
        log_z = -F.softplus(-gate)  # log(z)
        log_values = log_z + log_g(hidden)
        a_star = torch.cumsum(log_coeffs, dim=1)
        log_h = a_star + torch.logcumsumexp(log_values - a_star, dim=1)
        h = torch.exp(log_h)
        x = x + self.to_out(h)
        a, g = self.ff_in(self.norm2(x)).chunk(2, dim=-1)
        x = x + self.ff_out(a * F.gelu(g))
        return x, h[:, -1]


class Model(nn.Module):
    def __init__(self, vocab, dim, depth, expansion, conv_kernel, ff_mult):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.blocks = nn.ModuleList(
            [MinGRUBlock(dim, expansion, conv_kernel, ff_mult) for _ in range(depth)])
        self.norm = RMSNorm(dim)

    def forward(self, tokens):
        x = self.embed(tokens)
        last = []
        for block in self.blocks:
            x, h_last = block(x)
            last.append(h_last)
        logits = self.norm(x) @ self.embed.weight.t()
        return logits, torch.stack(last, dim=0)


batch = 4
seq_len = 256
vocab = 512
dim = 128
depth = 2
expansion = 1.5
conv_kernel = 4
ff_mult = 2


def get_inputs():
    return [torch.randint(0, vocab, (batch, seq_len))]


def get_init_inputs():
    return [vocab, dim, depth, expansion, conv_kernel, ff_mult]
