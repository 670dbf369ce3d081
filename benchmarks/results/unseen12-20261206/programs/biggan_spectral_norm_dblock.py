"""BigGAN / SN-GAN discriminator residual block with spectral normalisation computed in the
forward pass: for each conv weight, two power-iteration steps (matrix-vector products with the
flattened weight and its transpose, F.normalize) from a fixed random vector give sigma, the
weight is divided by it and used through F.conv2d; pre-activation ReLUs, 2x2 average-pool
downsampling and a spectrally normalised 1x1 shortcut."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class SNConv(nn.Module):
    def __init__(self, cin, cout, k, power_iters):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(cout, cin, k, k) * (cin * k * k) ** -0.5)
        self.bias = nn.Parameter(torch.zeros(cout))
        self.register_buffer("u", F.normalize(torch.randn(cout), dim=0))
        self.power_iters, self.pad = power_iters, k // 2

    def normalized_weight(self):
        w = self.weight.flatten(1)  # [cout, cin*k*k]
        u = self.u
        for _ in range(self.power_iters):
            v = F.normalize(torch.mv(w.t(), u), dim=0, eps=1e-12)
            u = F.normalize(torch.mv(w, v), dim=0, eps=1e-12)
        sigma = torch.dot(u, torch.mv(w, v))
        return self.weight / sigma

    def forward(self, x):
        return F.conv2d(x, self.normalized_weight(), self.bias, padding=self.pad)


class Model(nn.Module):
    def __init__(self, cin, cout, power_iters):
        super().__init__()
        self.conv1 = SNConv(cin, cout, 3, power_iters)
        self.conv2 = SNConv(cout, cout, 3, power_iters)
        self.shortcut = SNConv(cin, cout, 1, power_iters)

    def forward(self, x):
        h = self.conv1(F.relu(x))
        h = self.conv2(F.relu(h))
        h = F.avg_pool2d(h, 2)
        s = self.shortcut(F.avg_pool2d(x, 2))
        return h + s


batch = 32
in_channels = 128
out_channels = 256
height = 64
width = 64
power_iters = 2


def get_inputs():
    return [torch.randn(batch, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, power_iters]
