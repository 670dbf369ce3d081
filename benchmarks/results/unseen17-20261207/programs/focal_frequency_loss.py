"""Focal frequency loss (Jiang et al., ICCV 2021) for image reconstruction and GAN training:
orthonormal rfft2 of prediction and target, squared spectrum distance from the real and
imaginary parts, a detached spectrum weight |diff|^alpha, log1p-compressed and normalised by
each image-channel's maximum over both frequency axes, clamped to [0, 1]; the weighted mean
is added to a pixel L1 term. Returns the total and the frequency term."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, alpha, freq_weight):
        super().__init__()
        self.alpha = alpha
        self.freq_weight = freq_weight

    def forward(self, pred, target):
        pf = torch.fft.rfft2(pred, norm="ortho")
        tf = torch.fft.rfft2(target, norm="ortho")
        diff = pf - tf
        dist = diff.real.pow(2) + diff.imag.pow(2)  # [B, C, H, W // 2 + 1]
        weight = torch.log1p(dist.sqrt().pow(self.alpha))
        weight = weight / weight.amax(dim=(-2, -1), keepdim=True).clamp(min=1e-12)
        weight = weight.clamp(0.0, 1.0).detach()
        freq = (weight * dist).mean()
        pixel = F.l1_loss(pred, target)
        return pixel + self.freq_weight * freq, freq


batch = 8
channels = 3
height = 256
width = 256


def get_inputs():
    pred = torch.rand(batch, channels, height, width)
    target = torch.rand(batch, channels, height, width)
    return [pred, target]


def get_init_inputs():
    return [1.0, 1.0]
