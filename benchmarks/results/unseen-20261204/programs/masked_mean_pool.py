"""Sentence embedding: mean of token states over an attention mask, then L2-normalised."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def forward(self, h, mask):
        m = mask.unsqueeze(-1).to(h.dtype)
        pooled = (h * m).sum(1) / m.sum(1).clamp(min=1e-9)
        return F.normalize(pooled, p=2, dim=1)


batch, seq, hidden = 256, 512, 768


def get_inputs():
    lens = torch.randint(1, seq + 1, (batch,))
    return [torch.randn(batch, seq, hidden), (torch.arange(seq)[None] < lens[:, None]).long()]


def get_init_inputs():
    return []
