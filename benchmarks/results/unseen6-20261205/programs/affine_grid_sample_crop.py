"""Per-sample zoom and crop: an affine sampling grid built from a scale and a 2-D
translation, bilinear grid sampling with border padding to a smaller output, then a
1x1 convolution."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, out_height, out_width):
        super().__init__()
        self.out_size = (out_height, out_width)
        self.proj = nn.Conv2d(in_channels, out_channels, kernel_size=1)

    def forward(self, x, scale, shift):
        zero = torch.zeros_like(scale)
        row0 = torch.stack([scale, zero, shift[:, 0]], dim=-1)
        row1 = torch.stack([zero, scale, shift[:, 1]], dim=-1)
        theta = torch.stack([row0, row1], dim=1)
        n, c = x.shape[:2]
        grid = F.affine_grid(theta, [n, c, *self.out_size], align_corners=False)
        crop = F.grid_sample(x, grid, mode="bilinear", padding_mode="border",
                             align_corners=False)
        return self.proj(crop)


batch = 32
in_channels = 64
out_channels = 128
height = 128
width = 128
out_height = 64
out_width = 64


def get_inputs():
    x = torch.randn(batch, in_channels, height, width)
    scale = torch.rand(batch) * 0.6 + 0.3
    shift = torch.rand(batch, 2) * 1.2 - 0.6
    return [x, scale, shift]


def get_init_inputs():
    return [in_channels, out_channels, out_height, out_width]
