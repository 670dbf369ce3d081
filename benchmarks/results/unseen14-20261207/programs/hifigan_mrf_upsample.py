"""HiFi-GAN V1 generator stage: transposed-conv upsampling and multi-receptive-field fusion."""

import torch
import torch.nn as nn
import torch.nn.functional as F

LRELU_SLOPE = 0.1


class ResBlock1(nn.Module):
    def __init__(self, channels, kernel_size, dilations=(1, 3, 5)):
        super().__init__()
        self.convs1 = nn.ModuleList(
            nn.Conv1d(channels, channels, kernel_size, dilation=d,
                      padding=(kernel_size * d - d) // 2) for d in dilations)
        self.convs2 = nn.ModuleList(
            nn.Conv1d(channels, channels, kernel_size, padding=(kernel_size - 1) // 2)
            for _ in dilations)

    def forward(self, x):
        for c1, c2 in zip(self.convs1, self.convs2, strict=True):
            xt = c1(F.leaky_relu(x, LRELU_SLOPE))
            xt = c2(F.leaky_relu(xt, LRELU_SLOPE))
            x = xt + x
        return x


class Model(nn.Module):
    def __init__(self, channels, upsample_rate=8, kernel_sizes=(3, 7, 11)):
        super().__init__()
        self.up = nn.ConvTranspose1d(channels, channels // 2, 2 * upsample_rate,
                                     stride=upsample_rate, padding=upsample_rate // 2)
        self.resblocks = nn.ModuleList(ResBlock1(channels // 2, k) for k in kernel_sizes)

    def forward(self, x):
        x = self.up(F.leaky_relu(x, LRELU_SLOPE))
        xs = None
        for block in self.resblocks:
            y = block(x)
            xs = y if xs is None else xs + y
        return xs / len(self.resblocks)


batch = 16
channels = 256
frames = 512


def get_inputs():
    return [torch.randn(batch, channels, frames)]


def get_init_inputs():
    return [channels]
