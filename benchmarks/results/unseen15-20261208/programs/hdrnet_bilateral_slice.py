"""HDRNet full-resolution stream: learned guidance curve, trilinear bilateral-grid slicing, per-
pixel affine."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, lowres_channels=64, grid_depth=8, n_knots=16):
        super().__init__()
        self.grid_depth = grid_depth
        # coefficient head over the low-resolution features: 12 = 3x4 affine per grid cell
        self.coeff_head = nn.Conv2d(lowres_channels, 12 * grid_depth, 1)
        # guidance: 3x3 colour transform, a per-channel piecewise-linear curve, 1x1 mix
        self.ccm = nn.Conv2d(3, 3, 1)
        with torch.no_grad():
            self.ccm.weight.copy_(torch.eye(3).view(3, 3, 1, 1) + 0.05 * torch.randn(3, 3, 1, 1))
        knots = torch.linspace(0, 1, n_knots + 1)[:-1]
        self.register_buffer("knots", knots.view(1, 1, n_knots, 1, 1))
        self.slopes = nn.Parameter(torch.rand(1, 3, n_knots, 1, 1) * 2.0 / n_knots)
        self.mix = nn.Conv2d(3, 1, 1)

    def guide(self, img):
        x = self.ccm(img).unsqueeze(2)  # [B, 3, 1, H, W]
        curve = (self.slopes * F.relu(x - self.knots)).sum(dim=2)  # [B, 3, H, W]
        return torch.sigmoid(self.mix(curve)).squeeze(1)  # [B, H, W] in (0, 1)

    def forward(self, img, lowres_features):
        b, _, h, w = img.shape
        coeffs = self.coeff_head(lowres_features)  # [B, 12 * D, Hg, Wg]
        grid = coeffs.view(b, 12, self.grid_depth, coeffs.shape[-2], coeffs.shape[-1])
        g = self.guide(img)
        ys = torch.linspace(-1, 1, h, device=img.device).view(1, h, 1).expand(b, h, w)
        xs = torch.linspace(-1, 1, w, device=img.device).view(1, 1, w).expand(b, h, w)
        zs = g * 2 - 1
        pos = torch.stack((xs, ys, zs), dim=-1).unsqueeze(1)  # [B, 1, H, W, 3]
        sliced = F.grid_sample(grid, pos, mode="bilinear", align_corners=True)  # trilinear
        affine = sliced.squeeze(2).view(b, 3, 4, h, w)
        out = (affine[:, :, :3] * img.unsqueeze(1)).sum(dim=2) + affine[:, :, 3]
        return out, g


batch = 4
height = 256
width = 256
_GRID = 16


def get_inputs():
    img = torch.rand(batch, 3, height, width)
    lowres_features = torch.randn(batch, 64, _GRID, _GRID)
    return [img, lowres_features]


def get_init_inputs():
    return []
