"""Weight-only int4 linear layer: eight 4-bit weights packed per int32, unpacked with
shifts and masks, dequantised per group of 128 inputs with a scale and zero point, then
a matmul with the activations and a bias."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_features, out_features, group):
        super().__init__()
        g = torch.Generator().manual_seed(0)
        self.register_buffer("packed", torch.randint(
            -2**31, 2**31 - 1, (out_features, in_features // 8), generator=g, dtype=torch.int32))
        self.register_buffer("scales", torch.rand(out_features, in_features // group,
                                                  generator=g) * 0.02)
        self.register_buffer("zeros", torch.full((out_features, in_features // group), 8.0))
        self.register_buffer("shifts", torch.arange(0, 32, 4, dtype=torch.int32))
        self.bias = nn.Parameter(torch.zeros(out_features))
        self.group = group

    def forward(self, x):
        q = (self.packed.unsqueeze(-1) >> self.shifts) & 0xF
        q = q.reshape(q.shape[0], -1).float()
        o, i = q.shape
        w = (q.view(o, i // self.group, self.group) - self.zeros[..., None]) \
            * self.scales[..., None]
        return x @ w.view(o, i).t() + self.bias


tokens, in_features, out_features = 256, 4096, 4096


def get_inputs():
    return [torch.randn(tokens, in_features)]


def get_init_inputs():
    return [in_features, out_features, 128]
