"""A RepVGG stage (Ding et al.) run in its deploy form, with the structural re-parameterisation
done inside forward: every block folds its eval-mode BatchNorms (running statistics buffers)
into the 3x3 kernel, the 1x1 kernel zero-padded to 3x3 with F.pad and, where the shapes allow,
an identity branch written as a 3x3 kernel built from torch.eye, sums them into one kernel and
bias, and runs a single conv2d + ReLU. The first block is strided and widens the channels (no
identity branch). The input arrives in channels_last memory format; the stage ends with global
average pooling and a linear classifier. Returns the logits and the final feature map."""

import torch
import torch.nn as nn
import torch.nn.functional as F


def _bn_params(c, seed):
    g = torch.Generator().manual_seed(seed)
    return (torch.rand(c, generator=g) * 0.5 + 0.75, torch.randn(c, generator=g) * 0.1,
            torch.randn(c, generator=g) * 0.1, torch.rand(c, generator=g) * 0.5 + 0.5)


class RepBlock(nn.Module):
    def __init__(self, cin, cout, stride, seed, eps=1e-5):
        super().__init__()
        self.stride = stride
        self.eps = eps
        self.identity = cin == cout and stride == 1
        self.w3 = nn.Parameter(torch.randn(cout, cin, 3, 3) * (2.0 / (9 * cin)) ** 0.5)
        self.w1 = nn.Parameter(torch.randn(cout, cin, 1, 1) * (2.0 / cin) ** 0.5)
        names = ["bn3", "bn1", "bnid"] if self.identity else ["bn3", "bn1"]
        for i, name in enumerate(names):
            gamma, beta, mean, var = _bn_params(cout, seed * 10 + i)
            self.register_parameter(name + "_weight", nn.Parameter(gamma))
            self.register_parameter(name + "_bias", nn.Parameter(beta))
            self.register_buffer(name + "_mean", mean)
            self.register_buffer(name + "_var", var)

    def _fold(self, kernel, name):
        gamma = getattr(self, name + "_weight")
        std = torch.sqrt(getattr(self, name + "_var") + self.eps)
        scale = gamma / std
        bias = getattr(self, name + "_bias") - getattr(self, name + "_mean") * scale
        return kernel * scale.view(-1, 1, 1, 1), bias

    def forward(self, x):
        k3, b3 = self._fold(self.w3, "bn3")
        k1, b1 = self._fold(F.pad(self.w1, (1, 1, 1, 1)), "bn1")
        kernel, bias = k3 + k1, b3 + b1
        if self.identity:
            c = self.w3.shape[0]
            eye = torch.eye(c, device=x.device, dtype=x.dtype).view(c, c, 1, 1)
            kid, bid = self._fold(F.pad(eye, (1, 1, 1, 1)), "bnid")
            kernel, bias = kernel + kid, bias + bid
        return F.relu(F.conv2d(x, kernel, bias, stride=self.stride, padding=1))


class Model(nn.Module):
    def __init__(self, cin, cout, depth, num_classes):
        super().__init__()
        blocks = [RepBlock(cin, cout, 2, 0)]
        blocks += [RepBlock(cout, cout, 1, i) for i in range(1, depth)]
        self.blocks = nn.ModuleList(blocks)
        self.fc = nn.Linear(cout, num_classes)

    def forward(self, x):
        # x: [B, Cin, H, W], channels_last strides
        for blk in self.blocks:
            x = blk(x)
        pooled = x.mean(dim=(2, 3))
        return self.fc(pooled), x


batch = 32
in_channels = 64
out_channels = 128
height = 112
width = 112
depth = 4
num_classes = 1000


def get_inputs():
    x = torch.randn(batch, in_channels, height, width).contiguous(memory_format=torch.channels_last)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, depth, num_classes]
