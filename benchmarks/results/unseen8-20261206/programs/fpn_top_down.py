"""Feature Pyramid Network neck (Lin et al.; torchvision's FeaturePyramidNetwork with
LastLevelMaxPool) on ResNet C2-C5 features: 1x1 lateral convs, a top-down pathway of nearest
upsampling to the finer level's size plus the lateral, a 3x3 output conv per level, and P6
as a stride-2 max pool of P5."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.lateral = nn.ModuleList(nn.Conv2d(c, out_channels, 1) for c in in_channels)
        self.output = nn.ModuleList(
            nn.Conv2d(out_channels, out_channels, 3, padding=1) for _ in in_channels)

    def forward(self, c2, c3, c4, c5):
        feats = [c2, c3, c4, c5]
        inner = self.lateral[-1](c5)
        outs = [self.output[-1](inner)]
        for i in range(len(feats) - 2, -1, -1):
            lat = self.lateral[i](feats[i])
            inner = lat + F.interpolate(inner, size=lat.shape[-2:], mode="nearest")
            outs.insert(0, self.output[i](inner))
        outs.append(F.max_pool2d(outs[-1], kernel_size=1, stride=2))
        return tuple(outs)


batch = 8
height = 128  # C2 is a stride-4 map of a 512 x 512 image
width = 128
c2_channels = 256
c3_channels = 512
c4_channels = 1024
c5_channels = 2048
fpn_channels = 256


def get_inputs():
    return [
        torch.relu(torch.randn(batch, c2_channels, height, width)),
        torch.relu(torch.randn(batch, c3_channels, height // 2, width // 2)),
        torch.relu(torch.randn(batch, c4_channels, height // 4, width // 4)),
        torch.relu(torch.randn(batch, c5_channels, height // 8, width // 8)),
    ]


def get_init_inputs():
    return [[c2_channels, c3_channels, c4_channels, c5_channels], fpn_channels]
