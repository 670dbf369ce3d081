"""Soft-argmax keypoint decoding: each heatmap softmaxed over its H * W positions with a
temperature, then the expected x and y coordinates on a [-1, 1] grid, as [B, K, 2]."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, temperature):
        super().__init__()
        self.temperature = temperature

    def forward(self, heatmaps):
        b, k, h, w = heatmaps.shape
        p = F.softmax(heatmaps.reshape(b, k, h * w) / self.temperature, dim=-1)
        p = p.view(b, k, h, w)
        xs = torch.linspace(-1.0, 1.0, w, device=heatmaps.device)
        ys = torch.linspace(-1.0, 1.0, h, device=heatmaps.device)
        x = (p.sum(dim=2) * xs).sum(dim=-1)
        y = (p.sum(dim=3) * ys).sum(dim=-1)
        return torch.stack([x, y], dim=-1)


batch, keypoints, height, width = 64, 17, 128, 128


def get_inputs():
    return [torch.randn(batch, keypoints, height, width) * 2]


def get_init_inputs():
    return [0.1]
