"""Mean pooling over a padding mask: sum(x * mask) / sum(mask) along the sequence, the
mask built from lengths by an arange comparison."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, lengths):
        seq = x.shape[1]
        mask = (torch.arange(seq, device=x.device)[None, :] < lengths[:, None]).to(x.dtype)
        mask = mask.unsqueeze(-1)
        return (x * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1.0)


batch = 64
seq = 1024
hidden = 1024


def get_inputs():
    return [torch.randn(batch, seq, hidden), torch.randint(1, seq + 1, (batch,))]


def get_init_inputs():
    return []
