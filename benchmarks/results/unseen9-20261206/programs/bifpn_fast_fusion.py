"""One EfficientDet BiFPN layer (Tan et al.) over P3-P5 with fast normalised fusion: each
node takes learnable non-negative weights relu(w) / (sum relu(w) + eps), fuses its inputs
(nearest x2 upsampling on the top-down path, 3x3 stride-2 max pooling on the bottom-up path),
applies swish and a depthwise-separable 3x3 conv with inference-mode BatchNorm. Interesting:
tiny weight vectors normalised in-graph and broadcast as scalars into three-input sums at
three resolutions, with resampling and depthwise + pointwise convs between them."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class SeparableConvBN(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.depthwise = nn.Conv2d(channels, channels, 3, padding=1, groups=channels, bias=False)
        self.pointwise = nn.Conv2d(channels, channels, 1)
        self.bn_weight = nn.Parameter(1.0 + 0.1 * torch.randn(channels))
        self.bn_bias = nn.Parameter(0.1 * torch.randn(channels))
        self.register_buffer("running_mean", 0.1 * torch.randn(channels))
        self.register_buffer("running_var", 0.5 + torch.rand(channels))

    def forward(self, x):
        x = self.pointwise(self.depthwise(x))
        return F.batch_norm(x, self.running_mean, self.running_var, self.bn_weight,
                            self.bn_bias, training=False, momentum=0.01, eps=1e-3)


def _fuse(weights, inputs, eps):
    w = F.relu(weights)
    w = w / (w.sum() + eps)
    out = w[0] * inputs[0]
    for i in range(1, len(inputs)):
        out = out + w[i] * inputs[i]
    return F.silu(out)


class Model(nn.Module):
    def __init__(self, channels, eps):
        super().__init__()
        self.eps = eps
        self.w_p4_td = nn.Parameter(torch.ones(2))
        self.w_p3_out = nn.Parameter(torch.ones(2))
        self.w_p4_out = nn.Parameter(torch.ones(3))
        self.w_p5_out = nn.Parameter(torch.ones(2))
        self.conv_p4_td = SeparableConvBN(channels)
        self.conv_p3_out = SeparableConvBN(channels)
        self.conv_p4_out = SeparableConvBN(channels)
        self.conv_p5_out = SeparableConvBN(channels)

    def forward(self, p3, p4, p5):
        up = lambda t: F.interpolate(t, scale_factor=2.0, mode="nearest")
        down = lambda t: F.max_pool2d(t, kernel_size=3, stride=2, padding=1)
        p4_td = self.conv_p4_td(_fuse(self.w_p4_td, [p4, up(p5)], self.eps))
        p3_out = self.conv_p3_out(_fuse(self.w_p3_out, [p3, up(p4_td)], self.eps))
        p4_out = self.conv_p4_out(_fuse(self.w_p4_out, [p4, p4_td, down(p3_out)], self.eps))
        p5_out = self.conv_p5_out(_fuse(self.w_p5_out, [p5, down(p4_out)], self.eps))
        return p3_out, p4_out, p5_out


batch = 16
channels = 160  # EfficientDet-D3 width
p5_size = 16  # a 512 x 512 image: P3 64 x 64, P4 32 x 32, P5 16 x 16


def get_inputs():
    return [
        torch.randn(batch, channels, 4 * p5_size, 4 * p5_size),
        torch.randn(batch, channels, 2 * p5_size, 2 * p5_size),
        torch.randn(batch, channels, p5_size, p5_size),
    ]


def get_init_inputs():
    return [channels, 1e-4]
