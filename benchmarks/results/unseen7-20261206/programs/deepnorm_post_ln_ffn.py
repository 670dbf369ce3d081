"""DeepNet (DeepNorm) post-LN feed-forward sublayer: LayerNorm(alpha * x + FFN(x)) with the
residual up-weighted by alpha = (2N)^(1/4) for an N-layer encoder, and the FFN weights
initialised with Xavier gain beta = (8N)^(-1/4)."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, dim, hidden, num_layers):
        super().__init__()
        self.alpha = (2.0 * num_layers) ** 0.25
        beta = (8.0 * num_layers) ** -0.25
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)
        nn.init.xavier_normal_(self.fc1.weight, gain=beta)
        nn.init.xavier_normal_(self.fc2.weight, gain=beta)
        self.norm = nn.LayerNorm(dim)

    def forward(self, x):
        h = self.fc2(F.gelu(self.fc1(x)))
        return self.norm(x * self.alpha + h)


batch = 16
seq = 512
dim = 1024
hidden = 4096
num_layers = 12


def get_inputs():
    return [torch.randn(batch, seq, dim)]


def get_init_inputs():
    return [dim, hidden, num_layers]
