"""Parallel-beam CT reconstruction by filtered backprojection, as used for sinogram-domain
reconstruction inside learned CT pipelines: the spatial-domain Ram-Lak ramp kernel (1/4 at 0,
-1/(pi n)^2 at odd n, apodised by a Hann window; a buffer built in __init__) is applied to every
projection row by conv1d with 'same' padding over the [B * A, 1, D] view, the projection angles'
cos/sin are buffers, and each pixel of the reconstruction grid is mapped to a fractional detector
coordinate u = x cos(theta) + y sin(theta) per angle; floor gives the left neighbour, both
neighbours are fetched with index_select on the flattened [B, A * D] sinogram using int64 indices
that include the angle offset, linearly interpolated with out-of-range weights zeroed, and summed
over angles times pi / A. The image is clipped to be non-negative and masked to the inscribed
circular field of view; returns the image and the filtered sinogram."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, num_angles, num_det, image_size):
        super().__init__()
        self.image_size = image_size
        n = torch.arange(-(num_det - 1), num_det, dtype=torch.float64)
        ramp = torch.where(n.remainder(2) == 1, -1.0 / (math.pi * n) ** 2, torch.zeros_like(n))
        ramp = torch.where(n == 0, torch.full_like(n, 0.25), ramp)
        win = 0.5 + 0.5 * torch.cos(math.pi * n / num_det)
        self.register_buffer("ramp", (ramp * win).float().view(1, 1, -1))
        theta = torch.arange(num_angles, dtype=torch.float64) * math.pi / num_angles
        self.register_buffer("cos_t", theta.cos().float())
        self.register_buffer("sin_t", theta.sin().float())

    def forward(self, sino):
        # sino: [B, A, D] line integrals
        b, a, d = sino.shape
        p = self.image_size
        filt = F.conv1d(sino.reshape(b * a, 1, d), self.ramp, padding=d - 1).view(b, a, d)

        coords = torch.arange(p, device=sino.device, dtype=sino.dtype) - (p - 1) / 2.0
        coords = coords * (d / p)  # pixel spacing so that the grid spans the detector
        ys, xs = torch.meshgrid(coords, coords, indexing="ij")
        u = (xs.reshape(1, -1) * self.cos_t[:, None] + ys.reshape(1, -1) * self.sin_t[:, None])
        u = u + (d - 1) / 2.0  # [A, P*P] fractional detector index
        left = torch.floor(u)
        frac = u - left
        li = left.long()
        in_l = ((li >= 0) & (li < d)).to(sino.dtype)
        in_r = ((li + 1 >= 0) & (li + 1 < d)).to(sino.dtype)
        offs = (torch.arange(a, device=sino.device) * d)[:, None]
        idx_l = (li.clamp(0, d - 1) + offs).view(-1)
        idx_r = ((li + 1).clamp(0, d - 1) + offs).view(-1)
        flat = filt.reshape(b, a * d)
        v_l = flat.index_select(1, idx_l).view(b, a, -1)
        v_r = flat.index_select(1, idx_r).view(b, a, -1)
        vals = v_l * ((1.0 - frac) * in_l) + v_r * (frac * in_r)
        img = vals.sum(dim=1) * (math.pi / a)  # [B, P*P]
        r2 = (xs * xs + ys * ys).reshape(-1)
        fov = (r2 <= ((d - 1) / 2.0) ** 2).to(sino.dtype)
        img = img.clamp(min=0.0) * fov
        return img.view(b, p, p), filt


batch = 16
angles = 180
detectors = 367
image_size = 256


num_discs = 12


def get_inputs():
    # analytic parallel-beam projections of random discs (chord length times density) plus noise
    theta = torch.arange(angles) * math.pi / angles
    s = torch.arange(detectors) - (detectors - 1) / 2.0
    half = (detectors - 1) / 2.0
    cx = (torch.rand(batch, num_discs, 1, 1) - 0.5) * half
    cy = (torch.rand(batch, num_discs, 1, 1) - 0.5) * half
    rad = torch.rand(batch, num_discs, 1, 1) * 0.3 * half + 1.0
    rho = torch.rand(batch, num_discs, 1, 1) * 0.02
    centre = cx * theta.cos()[:, None] + cy * theta.sin()[:, None]  # [B, K, A, 1]
    chord = 2.0 * torch.sqrt((rad * rad - (s - centre) ** 2).clamp(min=0.0))
    sino = (rho * chord).sum(dim=1)
    return [sino + 0.01 * torch.randn(batch, angles, detectors)]


def get_init_inputs():
    return [angles, detectors, image_size]
