"""Sub-pixel upsampler: 3x3 conv to C*r^2 channels, pixel_shuffle(r), then nearest
interpolate to an explicit output size."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, cin, cout, r, out_h, out_w):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout * r * r, 3, padding=1)
        self.r = r
        self.size = (out_h, out_w)

    def forward(self, x):
        y = F.pixel_shuffle(self.conv(x), self.r)
        return F.interpolate(y, size=self.size, mode="nearest")


batch = 16
cin = 64
cout = 32
r = 2
height = 128
width = 128
out_h = 384
out_w = 384


def get_inputs():
    return [torch.randn(batch, cin, height, width)]


def get_init_inputs():
    return [cin, cout, r, out_h, out_w]
