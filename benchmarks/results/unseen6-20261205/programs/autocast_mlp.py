"""A four-layer MLP whose inner layers run under bfloat16 autocast; the result is cast back
to fp32 and layer-normalised."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, d_in, d_hidden, d_out):
        super().__init__()
        self.fc_in = nn.Linear(d_in, d_hidden)
        self.hidden = nn.ModuleList(nn.Linear(d_hidden, d_hidden) for _ in range(2))
        self.fc_out = nn.Linear(d_hidden, d_out)
        self.norm = nn.LayerNorm(d_out)

    def forward(self, x):
        h = F.gelu(self.fc_in(x))
        with torch.autocast(device_type=x.device.type, dtype=torch.bfloat16):
            for layer in self.hidden:
                h = F.silu(layer(h))
            h = self.fc_out(h)
        return self.norm(h.float())


batch, d_in, d_hidden, d_out = 8192, 1024, 2048, 1024


def get_inputs():
    return [torch.randn(batch, d_in)]


def get_init_inputs():
    return [d_in, d_hidden, d_out]
