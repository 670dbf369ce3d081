"""A differentiable camera ISP (as used to synthesise raw training data for denoisers, e.g.
Unprocessing): black/white-level normalisation of an RGGB Bayer mosaic, per-image white-balance
gains expanded onto the mosaic by parity masks, clipping, bilinear demosaicing by fixed 3x3
kernels over reflect-padded sparse colour planes (grouped conv), the camera's fixed 3x3
colour correction matrix by einsum, clipping and the piecewise sRGB gamma curve."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, black_level, white_level):
        super().__init__()
        self.black_level, self.white_level = black_level, white_level
        k_rb = torch.tensor([[1.0, 2.0, 1.0], [2.0, 4.0, 2.0], [1.0, 2.0, 1.0]]) / 4
        k_g = torch.tensor([[0.0, 1.0, 0.0], [1.0, 4.0, 1.0], [0.0, 1.0, 0.0]]) / 4
        self.register_buffer("kernels", torch.stack((k_rb, k_g, k_rb)).unsqueeze(1))
        # camera RGB -> linear sRGB, rows sum to one (neutral grey stays grey)
        self.register_buffer("ccm", torch.tensor([[1.78, -0.59, -0.19],
                                                  [-0.21, 1.56, -0.35],
                                                  [0.04, -0.62, 1.58]]))

    def forward(self, raw, wb_gains):
        # raw [B, 1, H, W] in [0, 1]; wb_gains [B, 3] (R, G, B) > 0
        B, _, H, W = raw.shape
        x = (raw - self.black_level) / (self.white_level - self.black_level)
        rows = torch.arange(H, device=raw.device).view(H, 1) % 2
        cols = torch.arange(W, device=raw.device).view(1, W) % 2
        r_mask = (rows == 0) & (cols == 0)
        g_mask = rows != cols
        b_mask = (rows == 1) & (cols == 1)
        masks = torch.stack((r_mask, g_mask, b_mask)).to(x.dtype)  # [3, H, W]
        gain_map = (wb_gains.view(B, 3, 1, 1) * masks).sum(dim=1, keepdim=True)
        x = (x * gain_map).clamp(0.0, 1.0)
        planes = x * masks.unsqueeze(0)  # [B, 3, H, W], zeros where a colour is missing
        planes = F.pad(planes, (1, 1, 1, 1), mode="reflect")
        rgb = F.conv2d(planes, self.kernels, groups=3)
        rgb = torch.einsum("ij,bjhw->bihw", self.ccm, rgb)
        rgb = rgb.clamp(0.0, 1.0)
        return torch.where(rgb <= 0.0031308, 12.92 * rgb,
                           1.055 * rgb.clamp_min(0.0031308) ** (1.0 / 2.4) - 0.055)


batch = 16
height = 1024
width = 1024
black_level = 0.0625
white_level = 1.0


def get_inputs():
    raw = torch.rand(batch, 1, height, width) ** 2  # linear raw data is mostly dark
    gains = torch.stack((torch.rand(batch) * 1.5 + 1.5, torch.ones(batch),
                         torch.rand(batch) * 1.5 + 1.2), dim=1)
    return [raw, gains]


def get_init_inputs():
    return [black_level, white_level]
