"""PSPNet (Zhao et al.) pyramid pooling head on a non-square backbone feature map:
adaptive average pooling to 1x1, 2x2, 3x3 and 6x6 bins (uneven bins), a 1x1 conv +
BatchNorm + ReLU per level, bilinear upsampling back with align_corners=True,
concatenation with the input, a 3x3 conv + BN + ReLU bottleneck and a 1x1 classifier."""

import torch
import torch.nn as nn
import torch.nn.functional as F


def _bn(channels):
    bn = nn.BatchNorm2d(channels)
    with torch.no_grad():
        bn.running_mean.uniform_(-0.1, 0.1)
        bn.running_var.uniform_(0.5, 1.5)
    return bn


class Model(nn.Module):
    def __init__(self, in_ch, branch_ch, mid_ch, num_classes):
        super().__init__()
        self.bins = (1, 2, 3, 6)
        self.convs = nn.ModuleList(nn.Conv2d(in_ch, branch_ch, 1, bias=False) for _ in self.bins)
        self.bns = nn.ModuleList(_bn(branch_ch) for _ in self.bins)
        self.bottleneck = nn.Conv2d(in_ch + len(self.bins) * branch_ch, mid_ch, 3,
                                    padding=1, bias=False)
        self.bottleneck_bn = _bn(mid_ch)
        self.classifier = nn.Conv2d(mid_ch, num_classes, 1)
        self.eval()

    def forward(self, feats):
        h, w = feats.shape[-2:]
        levels = [feats]
        for size, conv, bn in zip(self.bins, self.convs, self.bns, strict=True):
            y = F.adaptive_avg_pool2d(feats, size)
            y = F.relu(bn(conv(y)))
            levels.append(F.interpolate(y, size=(h, w), mode="bilinear", align_corners=True))
        y = F.relu(self.bottleneck_bn(self.bottleneck(torch.cat(levels, dim=1))))
        return self.classifier(y)


batch = 2
in_ch = 256
branch_ch = 64
mid_ch = 128
num_classes = 21
height = 96
width = 160


def get_inputs():
    return [torch.relu(torch.randn(batch, in_ch, height, width))]


def get_init_inputs():
    return [in_ch, branch_ch, mid_ch, num_classes]
