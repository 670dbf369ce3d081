"""Less common activations chained: softsign, hardsigmoid, CELU, logsigmoid, GLU over the
last dim, and a 'new GELU' written out with tanh."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def forward(self, x):
        a = F.softsign(x) + F.hardsigmoid(x) + F.celu(x, alpha=0.7) + F.logsigmoid(x)
        g = F.glu(a, dim=-1)
        return (
            0.5
            * g
            * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (g + 0.044715 * torch.pow(g, 3.0))))
        )


batch, dim = 4096, 2048


def get_inputs():
    return [torch.randn(batch, dim)]


def get_init_inputs():
    return []
