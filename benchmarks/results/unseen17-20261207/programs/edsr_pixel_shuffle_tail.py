"""EDSR-style single-image super-resolution network (Lim et al.): per-image mean removal (a
reduction over H and W), a head conv, residual blocks without BatchNorm (conv-ReLU-conv scaled
by res_scale), a global skip, a sub-pixel upsampler (conv to C * r^2 channels + PixelShuffle),
a tail conv to image channels, a bilinear-upsampled input skip, mean added back and the
output clamped to [0, 1]."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class ResBlock(nn.Module):
    def __init__(self, feats, res_scale):
        super().__init__()
        self.conv1 = nn.Conv2d(feats, feats, 3, padding=1)
        self.conv2 = nn.Conv2d(feats, feats, 3, padding=1)
        self.res_scale = res_scale

    def forward(self, x):
        return x + self.res_scale * self.conv2(F.relu(self.conv1(x)))


class Model(nn.Module):
    def __init__(self, in_channels, feats, num_blocks, scale, res_scale):
        super().__init__()
        self.scale = scale
        self.head = nn.Conv2d(in_channels, feats, 3, padding=1)
        self.body = nn.Sequential(*[ResBlock(feats, res_scale) for _ in range(num_blocks)])
        self.body_out = nn.Conv2d(feats, feats, 3, padding=1)
        self.upsample = nn.Conv2d(feats, feats * scale * scale, 3, padding=1)
        self.shuffle = nn.PixelShuffle(scale)
        self.tail = nn.Conv2d(feats, in_channels, 3, padding=1)

    def forward(self, lr):
        mean = lr.mean(dim=(2, 3), keepdim=True)
        x = lr - mean
        h = self.head(x)
        h = self.body_out(self.body(h)) + h
        up = self.shuffle(self.upsample(h))
        skip = F.interpolate(x, scale_factor=self.scale, mode="bilinear", align_corners=False)
        return (self.tail(up) + skip + mean).clamp(0.0, 1.0)


batch = 4
channels = 3
height = 96
width = 96
feats = 64


def get_inputs():
    return [torch.rand(batch, channels, height, width)]


def get_init_inputs():
    return [channels, feats, 4, 2, 0.1]
