"""Conv-BN-ReLU followed by efficient channel attention: global average pool, a 1-D conv
of width 5 across the channel axis, sigmoid, and the feature map scaled by the gate."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, in_channels, channels, k):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, channels, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(channels)
        self.eca = nn.Conv1d(1, 1, k, padding=k // 2, bias=False)

    def forward(self, x):
        x = F.relu(self.bn(self.conv(x)))
        y = F.adaptive_avg_pool2d(x, 1).squeeze(-1).squeeze(-1)
        y = self.eca(y.unsqueeze(1))
        gate = torch.sigmoid(y).squeeze(1)
        return x * gate[..., None, None]


batch, in_channels, channels, height, width = 16, 64, 128, 128, 128


def get_inputs():
    return [torch.randn(batch, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, channels, 5]
