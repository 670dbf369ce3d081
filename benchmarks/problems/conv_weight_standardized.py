"""BiT-style weight-standardised 3x3 conv: the weight normalised per output filter (mean/var
over in x kh x kw), F.conv2d, then GroupNorm and ReLU."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class StdConv2d(nn.Conv2d):
    def forward(self, x):
        w = self.weight
        v, m = torch.var_mean(w, dim=[1, 2, 3], keepdim=True, unbiased=False)
        w = (w - m) / torch.sqrt(v + 1e-10)
        return F.conv2d(x, w, self.bias, self.stride, self.padding, self.dilation, self.groups)


class Model(nn.Module):
    def __init__(self, cin, cout, groups):
        super().__init__()
        self.conv = StdConv2d(cin, cout, kernel_size=3, padding=1, bias=False)
        self.gn = nn.GroupNorm(groups, cout)

    def forward(self, x):
        return torch.relu(self.gn(self.conv(x)))


batch = 16
cin = 64
cout = 128
num_groups = 8  # below 16: a constant
height = 112
width = 112


def get_inputs():
    return [torch.randn(batch, cin, height, width)]


def get_init_inputs():
    return [cin, cout, num_groups]
