"""Masked-language-model head on the masked positions only: boolean-mask indexing (a
data-dependent number of rows), a Linear, GELU, LayerNorm and the tied vocabulary matmul."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, dim, vocab):
        super().__init__()
        self.dense = nn.Linear(dim, dim)
        self.norm = nn.LayerNorm(dim)
        self.embed = nn.Parameter(torch.randn(vocab, dim) * 0.02)

    def forward(self, hidden, mask):
        h = hidden[mask]
        h = self.norm(nn.functional.gelu(self.dense(h)))
        return h @ self.embed.t()


batch, seq, dim, vocab = 8, 512, 768, 8192


def get_inputs():
    return [torch.randn(batch, seq, dim), torch.rand(batch, seq) < 0.15]


def get_init_inputs():
    return [dim, vocab]
