"""WaveNet residual stack with local conditioning (van den Oord et al.; the Parallel
WaveGAN / r9y9 wavenet_vocoder layout): each layer left-pads by dilation * (kernel - 1) to
make a dilated conv1d causal, adds a 1x1 projection of the upsampled mel conditioning,
splits the channels into tanh and sigmoid halves and gates them, then a 1x1 conv gives the
skip contribution and another the residual (added and scaled by sqrt(0.5)); the summed skips
go through ReLU, 1x1, ReLU, 1x1. Interesting: F.pad left-only padding before dilated convs
(dilations 1..8), a chunk into two gate halves, and an accumulating skip sum across layers."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class GatedLayer(nn.Module):
    def __init__(self, res_channels, gate_channels, skip_channels, cond_channels, kernel_size,
                 dilation):
        super().__init__()
        self.pad = dilation * (kernel_size - 1)
        self.conv = nn.Conv1d(res_channels, gate_channels, kernel_size, dilation=dilation)
        self.cond = nn.Conv1d(cond_channels, gate_channels, 1, bias=False)
        self.res = nn.Conv1d(gate_channels // 2, res_channels, 1)
        self.skip = nn.Conv1d(gate_channels // 2, skip_channels, 1)

    def forward(self, x, c):
        h = self.conv(F.pad(x, (self.pad, 0))) + self.cond(c)
        a, b = h.chunk(2, dim=1)
        z = torch.tanh(a) * torch.sigmoid(b)
        return (x + self.res(z)) * math.sqrt(0.5), self.skip(z)


class Model(nn.Module):
    def __init__(self, res_channels, gate_channels, skip_channels, cond_channels, out_channels,
                 kernel_size, dilations):
        super().__init__()
        self.layers = nn.ModuleList(
            GatedLayer(res_channels, gate_channels, skip_channels, cond_channels, kernel_size, d)
            for d in dilations)
        self.out1 = nn.Conv1d(skip_channels, skip_channels, 1)
        self.out2 = nn.Conv1d(skip_channels, out_channels, 1)
        self.scale = math.sqrt(1.0 / len(dilations))

    def forward(self, x, cond):
        skips = 0
        for layer in self.layers:
            x, s = layer(x, cond)
            skips = skips + s
        skips = skips * self.scale
        return self.out2(F.relu(self.out1(F.relu(skips))))


batch = 16
samples = 16000
res_channels = 64
gate_channels = 128
skip_channels = 64
cond_channels = 80  # mel bins, already upsampled to the sample rate
out_channels = 256  # 8-bit mu-law logits


def get_inputs():
    return [torch.randn(batch, res_channels, samples),
            torch.randn(batch, cond_channels, samples) * 0.5]


def get_init_inputs():
    return [res_channels, gate_channels, skip_channels, cond_channels, out_channels, 3,
            [1, 2, 4, 8]]
