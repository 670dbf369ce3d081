"""StyleGAN2 modulated convolution layer: per-sample input-channel scales from an affine
map of w, modulated and demodulated weights, one grouped conv2d over the batch, per-pixel
noise times a learned strength, bias, and leaky ReLU(0.2) times sqrt(2)."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, w_dim, in_channels, out_channels, kernel_size):
        super().__init__()
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.affine = nn.Linear(w_dim, in_channels)
        nn.init.ones_(self.affine.bias)
        self.weight = nn.Parameter(
            torch.randn(1, out_channels, in_channels, kernel_size, kernel_size))
        self.weight_gain = 1.0 / math.sqrt(in_channels * kernel_size * kernel_size)
        self.noise_strength = nn.Parameter(torch.full([], 0.1))
        self.bias = nn.Parameter(torch.zeros(out_channels))

    def forward(self, x, w, noise):
        b, _, h, wd = x.shape
        k = self.kernel_size
        style = self.affine(w)
        weight = self.weight * self.weight_gain * style[:, None, :, None, None]
        demod = torch.rsqrt(weight.pow(2).sum(dim=[2, 3, 4]) + 1e-8)
        weight = weight * demod[:, :, None, None, None]
        weight = weight.reshape(b * self.out_channels, self.in_channels, k, k)
        out = F.conv2d(x.reshape(1, b * self.in_channels, h, wd), weight, padding=k // 2, groups=b)
        out = out.reshape(b, self.out_channels, h, wd)
        out = out + noise * self.noise_strength
        out = out + self.bias.view(1, -1, 1, 1)
        return F.leaky_relu(out, 0.2) * math.sqrt(2)


batch, w_dim, in_channels, out_channels, height, width, kernel_size = 16, 512, 256, 256, 64, 64, 3


def get_inputs():
    x = torch.randn(batch, in_channels, height, width)
    w = torch.randn(batch, w_dim)
    noise = torch.randn(batch, 1, height, width)
    return [x, w, noise]


def get_init_inputs():
    return [w_dim, in_channels, out_channels, kernel_size]
