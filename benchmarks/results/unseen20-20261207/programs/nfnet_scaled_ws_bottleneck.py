"""Normalizer-Free ResNet (NFNet-F0, Brock et al. 2021) transition bottleneck block.

Every convolution uses Scaled Weight Standardization computed in forward (per-output-channel
mean/variance of the weight over fan-in, scaled by a learnable gain), activations are
GELU times the NF variance-preserving gamma, the residual branch is scaled by beta on
input and alpha * skip_gain on output, and a 2*sigmoid squeeze-excite gates channels.
The shortcut is avg_pool2d + 1x1 WS conv. Exercises weight-side reductions (mean/var/rsqrt),
grouped and strided conv2d, adaptive pooling, broadcasting scalars and channel gates.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

GELU_GAMMA = 1.7015043497543335


class ScaledStdConv2d(nn.Conv2d):
    def __init__(self, c_in, c_out, k, stride=1, groups=1, eps=1e-4):
        super().__init__(c_in, c_out, k, stride=stride, padding=k // 2, groups=groups)
        self.gain = nn.Parameter(torch.ones(c_out, 1, 1, 1))
        self.eps = eps

    def forward(self, x):
        w = self.weight
        fan_in = w[0].numel()
        mean = w.mean(dim=(1, 2, 3), keepdim=True)
        var = w.var(dim=(1, 2, 3), unbiased=False, keepdim=True)
        w_hat = (w - mean) * torch.rsqrt(var * fan_in + self.eps) * self.gain
        return F.conv2d(x, w_hat, self.bias, self.stride, self.padding, 1, self.groups)


class Model(nn.Module):
    def __init__(self, c_in, c_out, bottleneck_ratio, group_width, stride, alpha, beta,
                 se_ratio):
        super().__init__()
        mid = int(c_out * bottleneck_ratio)
        groups = max(1, mid // group_width)
        mid = groups * group_width if mid >= group_width else mid
        self.alpha = alpha
        self.beta = beta
        self.stride = stride
        self.shortcut = ScaledStdConv2d(c_in, c_out, 1)
        self.conv1 = ScaledStdConv2d(c_in, mid, 1)
        self.conv2 = ScaledStdConv2d(mid, mid, 3, stride=stride, groups=groups)
        self.conv2b = ScaledStdConv2d(mid, mid, 3, groups=groups)
        self.conv3 = ScaledStdConv2d(mid, c_out, 1)
        se_hidden = max(1, int(c_out * se_ratio))
        self.se_fc1 = nn.Conv2d(c_out, se_hidden, 1)
        self.se_fc2 = nn.Conv2d(se_hidden, c_out, 1)
        self.skip_gain = nn.Parameter(torch.ones(()))

    def forward(self, x):
        out = F.gelu(x) * GELU_GAMMA * self.beta
        sc = out
        if self.stride > 1:
            sc = F.avg_pool2d(sc, kernel_size=2, stride=2, ceil_mode=True,
                              count_include_pad=False)
        sc = self.shortcut(sc)

        out = F.gelu(self.conv1(out)) * GELU_GAMMA
        out = F.gelu(self.conv2(out)) * GELU_GAMMA
        out = F.gelu(self.conv2b(out)) * GELU_GAMMA
        out = self.conv3(out)

        s = F.adaptive_avg_pool2d(out, 1)
        s = self.se_fc2(F.relu(self.se_fc1(s)))
        out = out * (2.0 * torch.sigmoid(s))
        return out * (self.alpha * self.skip_gain) + sc


batch = 4
c_in = 256
c_out = 512
height = 28
width = 28
bottleneck_ratio = 0.25
group_width = 64
stride = 2
alpha = 0.2
beta = 1.0
se_ratio = 0.5


def get_inputs():
    return [torch.randn(batch, c_in, height, width)]


def get_init_inputs():
    return [c_in, c_out, bottleneck_ratio, group_width, stride, alpha, beta, se_ratio]
