"""U-Net decoder step: transposed-conv upsampling, concatenation with the skip, two
conv + InstanceNorm + LeakyReLU layers."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.up = nn.ConvTranspose2d(cin, cout, 2, stride=2)
        self.conv = nn.Sequential(
            nn.Conv2d(2 * cout, cout, 3, padding=1),
            nn.InstanceNorm2d(cout, affine=True),
            nn.LeakyReLU(0.01),
            nn.Conv2d(cout, cout, 3, padding=1),
            nn.InstanceNorm2d(cout, affine=True),
            nn.LeakyReLU(0.01),
        )

    def forward(self, x, skip):
        return self.conv(torch.cat([self.up(x), skip], 1))


batch, cin, cout, size = 4, 128, 64, 32


def get_inputs():
    return [torch.randn(batch, cin, size, size), torch.randn(batch, cout, 2 * size, 2 * size)]


def get_init_inputs():
    return [cin, cout]
