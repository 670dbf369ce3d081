"""Temporal shift module (TSM): a slice of channels shifted one frame back, another one
frame forward (zero-filled via cat), the rest kept, then a 1x1 conv and ReLU."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, frames, channels, fold_div):
        super().__init__()
        self.frames = frames
        self.fold = channels // fold_div
        self.conv = nn.Conv2d(channels, channels, 1)

    def forward(self, x):
        nt, c, h, w = x.shape
        x5 = x.view(nt // self.frames, self.frames, c, h, w)
        f = self.fold
        back = torch.cat([x5[:, 1:, :f], torch.zeros_like(x5[:, :1, :f])], dim=1)
        fwd = torch.cat([torch.zeros_like(x5[:, :1, f : 2 * f]), x5[:, :-1, f : 2 * f]], dim=1)
        y = torch.cat([back, fwd, x5[:, :, 2 * f :]], dim=2).view(nt, c, h, w)
        return torch.relu(self.conv(y))


clips, frames, channels, size = 4, 8, 64, 56


def get_inputs():
    return [torch.randn(clips * frames, channels, size, size)]


def get_init_inputs():
    return [frames, channels, 8]
