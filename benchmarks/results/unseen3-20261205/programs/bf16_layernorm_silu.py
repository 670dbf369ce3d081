"""bf16 activations: LayerNorm without affine weights computed in fp32 (upcast, downcast),
SiLU, and a bf16 residual."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim, elementwise_affine=False)

    def forward(self, x):
        y = self.norm(x.float()).to(x.dtype)
        return x + nn.functional.silu(y)


batch, dim = 8192, 1024


def get_inputs():
    return [torch.randn(batch, dim, dtype=torch.bfloat16)]


def get_init_inputs():
    return [dim]
