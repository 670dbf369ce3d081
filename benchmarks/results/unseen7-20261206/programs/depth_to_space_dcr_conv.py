"""Super-resolution output head as exported from TensorFlow/ONNX: DepthToSpace in DCR mode
(view [N, r, r, C/r^2, H, W], permute to [N, C/r^2, H, r, W, r], reshape to the upscaled
map, which differs from PixelShuffle's CRD order), then a 3x3 conv to RGB and a sigmoid."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, channels, block, out_channels):
        super().__init__()
        self.block = block
        self.conv = nn.Conv2d(channels // (block * block), out_channels, 3, padding=1)

    def forward(self, x):
        n, c, h, w = x.shape
        r = self.block
        y = x.view(n, r, r, c // (r * r), h, w)
        y = y.permute(0, 3, 4, 1, 5, 2).reshape(n, c // (r * r), h * r, w * r)
        return torch.sigmoid(self.conv(y))


batch = 16
channels = 64
height = 128
width = 128


def get_inputs():
    return [torch.randn(batch, channels, height, width)]


def get_init_inputs():
    return [channels, 2, 3]
