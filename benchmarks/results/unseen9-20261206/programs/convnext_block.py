"""ConvNeXt block (Liu et al., "A ConvNet for the 2020s"): depthwise 7x7 conv in NCHW, a
permute to channels-last, LayerNorm over channels (eps 1e-6), an inverted-bottleneck MLP
(Linear 4x, GELU, Linear) applied as pointwise convs over the last dim, a per-channel layer
scale gamma, the permute back and the residual add. Interesting: the two permutes around a
last-dim LayerNorm and two GEMMs, fed by a large-kernel depthwise conv."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, dim, mlp_ratio, layer_scale):
        super().__init__()
        self.dwconv = nn.Conv2d(dim, dim, kernel_size=7, padding=3, groups=dim)
        self.norm = nn.LayerNorm(dim, eps=1e-6)
        self.pwconv1 = nn.Linear(dim, mlp_ratio * dim)
        self.pwconv2 = nn.Linear(mlp_ratio * dim, dim)
        self.gamma = nn.Parameter(layer_scale * torch.ones(dim))

    def forward(self, x):
        shortcut = x
        x = self.dwconv(x)
        x = x.permute(0, 2, 3, 1)  # [B, H, W, C]
        x = self.norm(x)
        x = self.pwconv2(F.gelu(self.pwconv1(x)))
        x = self.gamma * x
        return shortcut + x.permute(0, 3, 1, 2)


batch = 64
dim = 192  # ConvNeXt-T stage 2
height = 28
width = 28


def get_inputs():
    return [torch.randn(batch, dim, height, width)]


def get_init_inputs():
    return [dim, 4, 0.1]
