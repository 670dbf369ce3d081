"""nn.MultiheadAttention, batch first, self-attention with a key padding mask."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)

    def forward(self, x, pad):
        out, _ = self.attn(x, x, x, key_padding_mask=pad, need_weights=False)
        return out


batch, seq, dim, heads = 8, 512, 512, 8


def get_inputs():
    pad = torch.zeros(batch, seq, dtype=torch.bool)
    pad[:, seq - 37:] = True
    return [torch.randn(batch, seq, dim), pad]


def get_init_inputs():
    return [dim, heads]
