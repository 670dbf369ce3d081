"""DiT block with adaLN-Zero conditioning, the MLP half: SiLU(c) through a linear layer to
3 * dim values chunked into shift, scale and gate; LayerNorm without affine; modulation
x * (1 + scale) + shift broadcast over the tokens; a tanh-GELU MLP; gated residual."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, dim, cond_dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim, elementwise_affine=False, eps=1e-6)
        self.ada = nn.Linear(cond_dim, 3 * dim)
        self.fc1 = nn.Linear(dim, 4 * dim)
        self.fc2 = nn.Linear(4 * dim, dim)

    def forward(self, x, c):
        # x: [B, T, D] patch tokens, c: [B, C] timestep + class embedding
        shift, scale, gate = self.ada(F.silu(c)).chunk(3, dim=1)
        h = self.norm(x) * (1 + scale.unsqueeze(1)) + shift.unsqueeze(1)
        h = self.fc2(F.gelu(self.fc1(h), approximate="tanh"))
        return x + gate.unsqueeze(1) * h


batch = 32
tokens = 256
dim = 1152
cond_dim = 1152


def get_inputs():
    return [torch.randn(batch, tokens, dim), torch.randn(batch, cond_dim)]


def get_init_inputs():
    return [dim, cond_dim]
