"""SSIM loss (Wang et al. 2004; the pytorch-ssim / pytorch_msssim formulation): an 11x11
Gaussian window (sigma 1.5) is applied as a depthwise conv2d with zero padding to x, y, x*x,
y*y and x*y; local variances and covariance are E[.] - mu products, the SSIM map is
((2 mu_x mu_y + C1)(2 s_xy + C2)) / ((mu_x^2 + mu_y^2 + C1)(s_x + s_y + C2)) with
C1 = 0.01^2, C2 = 0.03^2 for images in [0, 1], and the loss is 1 - mean. Interesting: five
depthwise convs sharing one window buffer over element-wise products of the inputs, then a
long element-wise chain into a global mean."""

import torch
import torch.nn as nn
import torch.nn.functional as F


def _gaussian_window(size, sigma, channels):
    coords = torch.arange(size, dtype=torch.float64) - (size - 1) / 2
    g = torch.exp(-(coords ** 2) / (2 * sigma ** 2))
    g = g / g.sum()
    w = torch.outer(g, g).to(torch.float32)
    return w.expand(channels, 1, size, size).contiguous()


class Model(nn.Module):
    def __init__(self, channels, window_size, sigma):
        super().__init__()
        self.channels = channels
        self.pad = window_size // 2
        self.register_buffer("window", _gaussian_window(window_size, sigma, channels))
        self.c1 = 0.01 ** 2
        self.c2 = 0.03 ** 2

    def forward(self, x, y):
        blur = lambda t: F.conv2d(t, self.window, padding=self.pad, groups=self.channels)
        mu_x = blur(x)
        mu_y = blur(y)
        mu_x2 = mu_x * mu_x
        mu_y2 = mu_y * mu_y
        mu_xy = mu_x * mu_y
        sigma_x = blur(x * x) - mu_x2
        sigma_y = blur(y * y) - mu_y2
        sigma_xy = blur(x * y) - mu_xy
        num = (2 * mu_xy + self.c1) * (2 * sigma_xy + self.c2)
        den = (mu_x2 + mu_y2 + self.c1) * (sigma_x + sigma_y + self.c2)
        return 1 - (num / den).mean()


batch = 32
channels = 3
height = 256
width = 256


def get_inputs():
    x = torch.rand(batch, channels, height, width)
    y = (x + 0.1 * torch.randn(batch, channels, height, width)).clamp(0, 1)
    return [x, y]


def get_init_inputs():
    return [channels, 11, 1.5]
