"""YOLOv5 SPPF (Spatial Pyramid Pooling - Fast, Ultralytics): a 1x1 Conv-BN-SiLU halves the
channels, three max pools (5x5, stride 1, padding 2) are chained so that they cover 5, 9 and
13 pixel windows, the input and the three pooled maps are concatenated and a second 1x1
Conv-BN-SiLU maps them back. BatchNorm runs in inference mode from running statistics.
Interesting: chained same-size pools (each a dependency of the next) and a 4-way cat feeding
a pointwise conv."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class ConvBNSiLU(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 1, bias=False)
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(cout))
        self.bias = nn.Parameter(0.1 * torch.randn(cout))
        self.register_buffer("running_mean", 0.1 * torch.randn(cout))
        self.register_buffer("running_var", 0.5 + torch.rand(cout))

    def forward(self, x):
        x = self.conv(x)
        x = F.batch_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                         training=False, eps=1e-3)
        return F.silu(x)


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, pool_kernel):
        super().__init__()
        hidden = in_channels // 2
        self.cv1 = ConvBNSiLU(in_channels, hidden)
        self.cv2 = ConvBNSiLU(hidden * 4, out_channels)
        self.pool = nn.MaxPool2d(pool_kernel, stride=1, padding=pool_kernel // 2)

    def forward(self, x):
        x = self.cv1(x)
        y1 = self.pool(x)
        y2 = self.pool(y1)
        y3 = self.pool(y2)
        return self.cv2(torch.cat([x, y1, y2, y3], dim=1))


batch = 64
in_channels = 512  # YOLOv5s P5 (640 x 640 input -> 20 x 20)
out_channels = 512
height = 20
width = 20


def get_inputs():
    return [F.silu(torch.randn(batch, in_channels, height, width))]


def get_init_inputs():
    return [in_channels, out_channels, 5]
