"""Diffusion-UNet ResBlock: GroupNorm-SiLU-conv3x3, plus a projected SiLU(time embedding) per
channel, GroupNorm-SiLU-conv3x3, identity residual."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, channels, temb_dim, groups):
        super().__init__()
        self.norm1 = nn.GroupNorm(groups, channels)
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1)
        self.temb_proj = nn.Linear(temb_dim, channels)
        self.norm2 = nn.GroupNorm(groups, channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1)

    def forward(self, x, temb):
        h = self.conv1(F.silu(self.norm1(x)))
        h = h + self.temb_proj(F.silu(temb))[:, :, None, None]
        h = self.conv2(F.silu(self.norm2(h)))
        return x + h


batch = 32
channels = 256
temb_dim = 512
groups = 8  # below 16: a constant
height = 64
width = 64


def get_inputs():
    return [torch.randn(batch, channels, height, width), torch.randn(batch, temb_dim)]


def get_init_inputs():
    return [channels, temb_dim, groups]
