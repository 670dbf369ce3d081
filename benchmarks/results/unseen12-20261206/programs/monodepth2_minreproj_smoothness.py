"""Monodepth2 self-supervised depth loss (no SSIM variant): per-pixel L1 reprojection errors of
two warped source frames and of the two unwarped sources (auto-masking), a per-pixel minimum
over the four stacked candidates, plus the edge-aware disparity smoothness term at three decoder
scales: mean-normalised disparity, slice-difference gradients weighted by exp(-|image gradient|)
with the image area-downsampled by avg_pool2d to each scale (also returned per scale)."""

import torch
import torch.nn as nn
import torch.nn.functional as F


def smoothness(disp, img):
    disp = disp / (disp.mean(dim=(2, 3), keepdim=True) + 1e-7)
    gdx = (disp[:, :, :, :-1] - disp[:, :, :, 1:]).abs()
    gdy = (disp[:, :, :-1, :] - disp[:, :, 1:, :]).abs()
    gix = (img[:, :, :, :-1] - img[:, :, :, 1:]).abs().mean(dim=1, keepdim=True)
    giy = (img[:, :, :-1, :] - img[:, :, 1:, :]).abs().mean(dim=1, keepdim=True)
    return (gdx * torch.exp(-gix)).mean() + (gdy * torch.exp(-giy)).mean()


class Model(nn.Module):
    def __init__(self, smooth_weight):
        super().__init__()
        self.smooth_weight = smooth_weight

    def forward(self, target, warped_prev, warped_next, source_prev, source_next,
                disp0, disp1, disp2):
        reproj = torch.cat([(p - target).abs().mean(dim=1, keepdim=True)
                            for p in (warped_prev, warped_next)], dim=1)
        identity = torch.cat([(s - target).abs().mean(dim=1, keepdim=True)
                              for s in (source_prev, source_next)], dim=1)
        per_pixel, _ = torch.min(torch.cat((identity, reproj), dim=1), dim=1)
        terms = []
        for scale, disp in enumerate((disp0, disp1, disp2)):
            img = F.avg_pool2d(target, 2 ** scale) if scale > 0 else target
            terms.append(smoothness(disp, img) / (2 ** scale))
        smooth = torch.stack(terms)  # logged per scale
        return per_pixel.mean() + self.smooth_weight * smooth.sum(), smooth


batch = 12
height = 320
width = 1024
smooth_weight = 1e-3


def get_inputs():
    target = torch.rand(batch, 3, height, width)
    frames = [(target + 0.1 * torch.randn(batch, 3, height, width)).clamp(0, 1)
              for _ in range(4)]
    disps = [torch.sigmoid(torch.randn(batch, 1, height >> s, width >> s)) for s in range(3)]
    return [target, *frames, *disps]


def get_init_inputs():
    return [smooth_weight]
