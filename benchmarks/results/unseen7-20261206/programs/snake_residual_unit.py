"""Descript Audio Codec / BigVGAN residual unit: the Snake activation
x + sin(alpha * x)^2 / (alpha + 1e-9) with a learned per-channel alpha, a dilated 7-tap
conv1d, Snake again, a 1x1 conv1d, and the residual (center-cropped if lengths differ)."""

import torch
import torch.nn as nn


def snake(x, alpha):
    shape = x.shape
    x = x.reshape(shape[0], shape[1], -1)
    x = x + (alpha + 1e-9).reciprocal() * torch.sin(alpha * x).pow(2)
    return x.reshape(shape)


class Model(nn.Module):
    def __init__(self, channels, dilation):
        super().__init__()
        self.alpha1 = nn.Parameter(torch.linspace(0.5, 2.0, channels).view(1, channels, 1))
        self.conv1 = nn.Conv1d(channels, channels, 7, dilation=dilation, padding=3 * dilation)
        self.alpha2 = nn.Parameter(torch.linspace(2.0, 0.5, channels).view(1, channels, 1))
        self.conv2 = nn.Conv1d(channels, channels, 1)

    def forward(self, x):
        y = self.conv1(snake(x, self.alpha1))
        y = self.conv2(snake(y, self.alpha2))
        pad = (x.shape[-1] - y.shape[-1]) // 2
        if pad > 0:
            x = x[..., pad:-pad]
        return x + y


batch = 8
channels = 64
length = 65536


def get_inputs():
    return [torch.randn(batch, channels, length)]


def get_init_inputs():
    return [channels, 9]
