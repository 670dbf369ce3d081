"""RAFT all-pairs correlation volume, 4-level average-pooled pyramid and radius-4 bilinear
lookup."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, num_levels=4, radius=4):
        super().__init__()
        self.num_levels, self.radius = num_levels, radius
        r = torch.arange(-radius, radius + 1, dtype=torch.float32)
        dy, dx = torch.meshgrid(r, r, indexing="ij")
        self.register_buffer("delta", torch.stack((dx, dy), dim=-1).view(1, 2 * radius + 1,
                                                                        2 * radius + 1, 2))

    def forward(self, fmap1, fmap2, flow):
        b, d, h, w = fmap1.shape
        f1 = fmap1.view(b, d, h * w).transpose(1, 2)
        f2 = fmap2.view(b, d, h * w)
        corr = torch.matmul(f1, f2) / math.sqrt(d)  # [B, HW, HW]
        corr = corr.reshape(b * h * w, 1, h, w)

        ys, xs = torch.meshgrid(torch.arange(h, device=flow.device),
                                torch.arange(w, device=flow.device), indexing="ij")
        coords = torch.stack((xs, ys), dim=0).to(flow.dtype)[None] + flow  # [B, 2, H, W]
        centroid = coords.permute(0, 2, 3, 1).reshape(b * h * w, 1, 1, 2)

        pyramid = [corr]
        for _ in range(self.num_levels - 1):
            pyramid.append(F.avg_pool2d(pyramid[-1], 2, stride=2))

        out = []
        for level, corr in enumerate(pyramid):
            hl, wl = corr.shape[-2:]
            grid = centroid / 2 ** level + self.delta  # [BHW, 2r+1, 2r+1, 2]
            gx = 2 * grid[..., 0] / max(wl - 1, 1) - 1
            gy = 2 * grid[..., 1] / max(hl - 1, 1) - 1
            sampled = F.grid_sample(corr, torch.stack((gx, gy), dim=-1), mode="bilinear",
                                    padding_mode="zeros", align_corners=True)
            out.append(sampled.view(b, h, w, -1))
        return torch.cat(out, dim=-1).permute(0, 3, 1, 2).contiguous()  # [B, L*(2r+1)^2, H, W]


batch = 4
feat_dim = 256
height = 32
width = 32


def get_inputs():
    fmap1 = torch.randn(batch, feat_dim, height, width)
    fmap2 = torch.randn(batch, feat_dim, height, width)
    flow = torch.randn(batch, 2, height, width) * 2.0
    return [fmap1, fmap2, flow]


def get_init_inputs():
    return []
