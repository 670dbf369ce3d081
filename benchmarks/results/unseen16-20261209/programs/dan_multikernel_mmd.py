"""DAN domain-adaptation loss: bottleneck Linear+ReLU on source and target features, then a
5-bandwidth Gaussian-kernel MMD with the bandwidth taken from the mean pairwise distance."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_dim, bottleneck, kernel_mul=2.0, kernel_num=5):
        super().__init__()
        self.kernel_mul = kernel_mul
        self.kernel_num = kernel_num
        self.bottleneck = nn.Sequential(nn.Linear(in_dim, bottleneck), nn.ReLU())

    def forward(self, source, target):
        ns = source.shape[0]
        z = self.bottleneck(torch.cat([source, target], dim=0))
        n = z.shape[0]
        sq = z.square().sum(dim=1)
        dist = (sq[:, None] + sq[None, :] - 2.0 * (z @ z.t())).clamp(min=0)
        bandwidth = dist.detach().sum() / (n * n - n)
        bandwidth = bandwidth / self.kernel_mul ** (self.kernel_num // 2)
        kernel = torch.zeros_like(dist)
        for i in range(self.kernel_num):
            kernel = kernel + torch.exp(-dist / (bandwidth * self.kernel_mul ** i + 1e-8))
        k_ss = kernel[:ns, :ns].mean()
        k_tt = kernel[ns:, ns:].mean()
        k_st = kernel[:ns, ns:].mean()
        return k_ss + k_tt - 2.0 * k_st


num_source = 4000
num_target = 3001
in_dim = 2048
bottleneck = 256


def get_inputs():
    source = torch.relu(torch.randn(num_source, in_dim))
    target = torch.relu(torch.randn(num_target, in_dim) * 1.2 + 0.1)
    return [source, target]


def get_init_inputs():
    return [in_dim, bottleneck]
