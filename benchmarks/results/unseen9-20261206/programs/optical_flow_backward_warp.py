"""Backward warping with optical flow, as in PWC-Net / RAFT / unsupervised flow losses: a
pixel base grid is built in-graph with arange + meshgrid, the flow is added, the coordinates
are normalised to [-1, 1] (align_corners=True) and stacked into a [B, H, W, 2] grid, the
second frame's features are sampled with bilinear grid_sample and border padding, and a
generalised Charbonnier photometric loss ((d^2 + eps^2)^0.45) against the first frame is
returned beside the warped features. Interesting: grid construction from index tensors,
a channel-last grid from two channel planes, and a data-dependent gather with border
clamping."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, eps, exponent):
        super().__init__()
        self.eps = eps
        self.exponent = exponent

    def forward(self, feat1, feat2, flow):
        b, _, h, w = feat2.shape
        ys, xs = torch.meshgrid(
            torch.arange(h, device=flow.device, dtype=flow.dtype),
            torch.arange(w, device=flow.device, dtype=flow.dtype),
            indexing="ij",
        )
        px = xs.unsqueeze(0) + flow[:, 0]
        py = ys.unsqueeze(0) + flow[:, 1]
        gx = 2.0 * px / max(w - 1, 1) - 1.0
        gy = 2.0 * py / max(h - 1, 1) - 1.0
        grid = torch.stack([gx, gy], dim=-1)  # [B, H, W, 2]
        warped = F.grid_sample(feat2, grid, mode="bilinear", padding_mode="border",
                               align_corners=True)
        diff = feat1 - warped
        loss = ((diff * diff + self.eps ** 2) ** self.exponent).mean()
        return warped, loss


batch = 32
channels = 32  # quarter-resolution features
height = 128
width = 160


def get_inputs():
    feat1 = torch.randn(batch, channels, height, width)
    feat2 = torch.randn(batch, channels, height, width)
    flow = torch.randn(batch, 2, height, width) * 4.0
    return [feat1, feat2, flow]


def get_init_inputs():
    return [0.01, 0.45]
