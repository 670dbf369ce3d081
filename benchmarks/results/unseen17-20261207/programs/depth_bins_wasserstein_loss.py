"""Monocular depth as per-pixel classification over depth bins (DORN/AdaBins-style heads) with
a Wasserstein-1 (earth mover's) loss: bf16 logits [B, K, H, W], softmax over the bin (channel)
axis, spacing-increasing bins between min and max depth built in forward, the predicted CDF by
cumsum over the bin axis against the target's step CDF, |difference| times bin widths summed
over bins; also the expected depth and the argmax bin's centre (gathered)."""

import math

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, min_depth, max_depth):
        super().__init__()
        self.log_min = math.log(min_depth)
        self.log_ratio = math.log(max_depth / min_depth)

    def forward(self, logits, depth):
        # logits: [B, K, H, W] bf16; depth: [B, H, W] metres
        k = logits.shape[1]
        steps = torch.arange(k + 1, device=logits.device, dtype=torch.float32) / k
        edges = torch.exp(self.log_min + self.log_ratio * steps)  # [K + 1]
        centers = 0.5 * (edges[1:] + edges[:-1]).view(1, k, 1, 1)
        widths = (edges[1:] - edges[:-1]).view(1, k, 1, 1)
        prob = torch.softmax(logits.float(), dim=1)
        cdf = torch.cumsum(prob, dim=1)
        target_cdf = (edges[1:].view(1, k, 1, 1) >= depth.unsqueeze(1)).float()
        emd = ((cdf - target_cdf).abs() * widths).sum(dim=1)  # [B, H, W]
        expected = (prob * centers).sum(dim=1)
        best = prob.argmax(dim=1)  # [B, H, W]
        hard = centers.view(k)[best]
        return emd.mean(), expected.to(logits.dtype), hard


batch = 8
num_bins = 64
height = 120
width = 160


def get_inputs():
    logits = torch.randn(batch, num_bins, height, width).bfloat16()
    depth = torch.rand(batch, height, width) * 9.5 + 0.5
    return [logits, depth]


def get_init_inputs():
    return [0.5, 10.0]
