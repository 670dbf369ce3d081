"""nn.TransformerDecoderLayer (self-attention with a causal mask, cross-attention over a
memory, feed-forward), batch first, norm first, GELU."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.layer = nn.TransformerDecoderLayer(
            dim, heads, 4 * dim, dropout=0.0, activation="gelu", batch_first=True, norm_first=True
        )

    def forward(self, tgt, memory):
        s = tgt.shape[1]
        mask = torch.triu(torch.full((s, s), float("-inf"), device=tgt.device), diagonal=1)
        return self.layer(tgt, memory, tgt_mask=mask)


batch, tgt_len, mem_len, dim, heads = 8, 128, 256, 256, 8


def get_inputs():
    return [torch.randn(batch, tgt_len, dim), torch.randn(batch, mem_len, dim)]


def get_init_inputs():
    return [dim, heads]
