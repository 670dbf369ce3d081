"""Conv-TasNet (Luo & Mesgarani) separator: a global layer norm (GroupNorm with one
group on [B, C, T]) and 1x1 bottleneck, four temporal blocks with dilations 1, 2, 4, 8
(1x1 conv, PReLU, gLN, depthwise conv with causal left padding, PReLU, gLN, residual and
skip 1x1 convs), the summed skips through PReLU and a 1x1 conv to sigmoid masks for two
speakers applied to the encoder output."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class TemporalBlock(nn.Module):
    def __init__(self, channels, hidden, kernel, dilation):
        super().__init__()
        self.pad = (kernel - 1) * dilation
        self.conv_in = nn.Conv1d(channels, hidden, 1)
        self.act1 = nn.PReLU()
        self.norm1 = nn.GroupNorm(1, hidden, eps=1e-8)
        self.dconv = nn.Conv1d(hidden, hidden, kernel, dilation=dilation, groups=hidden)
        self.act2 = nn.PReLU()
        self.norm2 = nn.GroupNorm(1, hidden, eps=1e-8)
        self.res = nn.Conv1d(hidden, channels, 1)
        self.skip = nn.Conv1d(hidden, channels, 1)

    def forward(self, x):
        y = self.norm1(self.act1(self.conv_in(x)))
        y = self.dconv(F.pad(y, (self.pad, 0)))
        y = self.norm2(self.act2(y))
        return x + self.res(y), self.skip(y)


class Model(nn.Module):
    def __init__(self, enc_ch, bottleneck, hidden, kernel, speakers):
        super().__init__()
        self.speakers = speakers
        self.norm = nn.GroupNorm(1, enc_ch, eps=1e-8)
        self.bottleneck = nn.Conv1d(enc_ch, bottleneck, 1)
        self.blocks = nn.ModuleList(
            TemporalBlock(bottleneck, hidden, kernel, 2 ** i) for i in range(4))
        self.out_act = nn.PReLU()
        self.mask = nn.Conv1d(bottleneck, speakers * enc_ch, 1)

    def forward(self, w):  # encoder output [B, N, T], non-negative
        x = self.bottleneck(self.norm(w))
        skips = 0.0
        for block in self.blocks:
            x, s = block(x)
            skips = skips + s
        m = torch.sigmoid(self.mask(self.out_act(skips)))
        b, n, t = w.shape
        return m.view(b, self.speakers, n, t) * w.unsqueeze(1)


batch = 4
enc_ch = 256
bottleneck = 128
hidden = 512
kernel = 3
speakers = 2
frames = 4000


def get_inputs():
    return [torch.relu(torch.randn(batch, enc_ch, frames))]


def get_init_inputs():
    return [enc_ch, bottleneck, hidden, kernel, speakers]
