"""DeepLabV3 segmentation head (Chen et al.; torchvision's DeepLabHead) on an output-stride-8
backbone map: ASPP with a 1x1 branch, three dilated 3x3 branches and an image-pooling branch
(global average pool, 1x1 conv, bilinear upsample back), each Conv-BN-ReLU, concatenated and
projected, a 3x3 Conv-BN-ReLU, 1x1 class logits and a bilinear
F.interpolate(align_corners=False) to the image size."""

import torch
import torch.nn as nn
import torch.nn.functional as F


def _conv_bn_relu(cin, cout, k, dilation=1):
    pad = 0 if k == 1 else dilation
    return nn.Sequential(
        nn.Conv2d(cin, cout, k, padding=pad, dilation=dilation, bias=False),
        nn.BatchNorm2d(cout),
        nn.ReLU(),
    )


class Model(nn.Module):
    def __init__(self, in_channels, channels, num_classes, rates, output_stride):
        super().__init__()
        self.branches = nn.ModuleList(
            [_conv_bn_relu(in_channels, channels, 1)]
            + [_conv_bn_relu(in_channels, channels, 3, r) for r in rates])
        self.pool_conv = _conv_bn_relu(in_channels, channels, 1)
        self.project = _conv_bn_relu(channels * (len(rates) + 2), channels, 1)
        self.head = _conv_bn_relu(channels, channels, 3)
        self.classifier = nn.Conv2d(channels, num_classes, 1)
        self.output_stride = output_stride

    def forward(self, feats):
        size = feats.shape[-2:]
        outs = [branch(feats) for branch in self.branches]
        pooled = self.pool_conv(F.adaptive_avg_pool2d(feats, 1))
        outs.append(F.interpolate(pooled, size=size, mode="bilinear", align_corners=False))
        x = self.project(torch.cat(outs, dim=1))
        x = self.classifier(self.head(x))
        image_size = (size[0] * self.output_stride, size[1] * self.output_stride)
        return F.interpolate(x, size=image_size, mode="bilinear", align_corners=False)


batch = 8
in_channels = 2048
channels = 256
num_classes = 21
height = 64
width = 64


def get_inputs():
    return [torch.relu(torch.randn(batch, in_channels, height, width))]


def get_init_inputs():
    return [in_channels, channels, num_classes, [12, 24, 36], 8]
