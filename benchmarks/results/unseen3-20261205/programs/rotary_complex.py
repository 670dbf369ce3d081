"""Rotary embeddings as Meta's Llama code writes them: frequencies as complex numbers
(torch.polar), queries viewed as complex pairs, multiplied, viewed back as real."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, head_dim, max_seq):
        super().__init__()
        freqs = 1.0 / (10000 ** (torch.arange(0, head_dim, 2).float() / head_dim))
        t = torch.arange(max_seq).float()
        freqs = torch.outer(t, freqs)
        self.register_buffer(
            "freqs_cis", torch.polar(torch.ones_like(freqs), freqs), persistent=False
        )

    def forward(self, xq):
        b, s, h, d = xq.shape
        xc = torch.view_as_complex(xq.float().reshape(b, s, h, d // 2, 2))
        f = self.freqs_cis[:s].view(1, s, 1, d // 2)
        return torch.view_as_real(xc * f).flatten(3).type_as(xq)


batch, seq, heads, head_dim = 4, 1024, 16, 128


def get_inputs():
    return [torch.randn(batch, seq, heads, head_dim)]


def get_init_inputs():
    return [head_dim, 4096]
